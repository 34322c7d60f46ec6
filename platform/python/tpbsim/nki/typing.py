"""nki.typing: annotations of a kernel's tensor parameters, ``tensor[128, 512]``
(a shape; a dtype may follow: ``tensor[128, 512, nl.float32]``), checked
against the arrays a call passes (NKIError naming the parameter)."""

from . import dtypes


class _TensorType:
    def __init__(self, shape, dt):
        self._nki_shape = tuple(shape)
        self._nki_dtype = dt

    def __repr__(self):
        dt = f", {self._nki_dtype.name}" if self._nki_dtype else ""
        return f"tensor[{', '.join(map(str, self._nki_shape))}{dt}]"


class _TensorAnnotation:
    """``tensor[...]``: an annotation; ``tensor`` alone says nothing."""

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        dt = None
        if key and not isinstance(key[-1], int):
            dt = dtypes.lookup(key[-1], "tensor annotation dtype")
            key = key[:-1]
        return _TensorType(tuple(int(n) for n in key), dt)

    def __repr__(self):
        return "nki.typing.tensor"


tensor = _TensorAnnotation()

__all__ = ["tensor"]
