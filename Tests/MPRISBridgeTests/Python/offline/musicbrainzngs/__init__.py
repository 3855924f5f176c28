"""A stand-in for musicbrainzngs, put first on meta_mpd.py's PYTHONPATH by SnapcastTests.

meta_mpd.py (Snapcast 0.26) looks up cover art on musicbrainz.org for each new album and catches
only ResponseError: without a network (the tests' namespace has only loopback) the real module
raises NetworkError and the plug-in dies. This one finds no release, as the service would for
the generated library, and sends nothing anywhere.
"""


class WebServiceError(Exception):
    pass


class ResponseError(WebServiceError):
    pass


class _Namespace:
    pass


musicbrainz = _Namespace()
musicbrainz.ResponseError = ResponseError
musicbrainz.WebServiceError = WebServiceError


def set_useragent(*arguments, **options):
    pass


def search_releases(*arguments, **options):
    return {"release-list": []}


def get_image_list(*arguments, **options):
    raise ResponseError("no cover art without a network")
