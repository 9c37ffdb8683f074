import mindspore


class Cache:
    def recompute(self):
        pass


def refresh():
    cache = Cache()
    cache.recompute()
