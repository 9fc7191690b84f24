"""Pictures from files, refused before decoding when they declare more pixels than a tray
photo has: an 82 KB JPEG whose header says 30000x30000 would take 5 GB to decode.

PNG, JPEG, BMP and WebP headers are read here; any other format OpenCV decodes meets
OpenCV's own limit, set to the same by `OPENCV_IO_MAX_IMAGE_PIXELS` (vision/__init__.py).
"""

from __future__ import annotations

import struct
from pathlib import Path

import cv2
import numpy as np

from tidetower.engine.files import HostileFile, read_bounded

MAX_PIXELS = 64_000_000
"""A 48-megapixel phone photo fits; decoded, this is 192 MB, a tenth of a Pi 4's memory."""
MAX_FILE_BYTES = 256 << 20
"""A photo of this many pixels is well under this even as an uncompressed BMP."""


class ImageError(ValueError):
    """The file is missing, unreadable, not an image, or too large to be a tray photo."""


def _png(data: bytes) -> tuple[int, int] | None:
    if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR":
        width, height = struct.unpack(">II", data[16:24])
        return int(width), int(height)
    return None


def _jpeg(data: bytes) -> tuple[int, int] | None:
    """The size in the first frame header (SOFn) of a JPEG, walking its markers."""
    if data[:2] != b"\xff\xd8":
        return None
    at = 2
    while at + 9 <= len(data):
        if data[at] != 0xFF:
            return None
        marker, length = data[at + 1], struct.unpack(">H", data[at + 2 : at + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return int(width), int(height)
        at += 2 + length
    return None


def _bmp(data: bytes) -> tuple[int, int] | None:
    if data[:2] == b"BM" and len(data) >= 26:
        width, height = struct.unpack("<ii", data[18:26])
        return abs(width), abs(height)
    return None


def _webp(data: bytes) -> tuple[int, int] | None:
    if data[:4] != b"RIFF" or data[8:12] != b"WEBP" or len(data) < 30:
        return None
    chunk = data[12:16]
    if chunk == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        return width, int.from_bytes(data[27:30], "little") + 1
    if chunk == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    return None


def declared_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) a picture's header declares, for the formats read here; else None."""
    for reader in (_png, _jpeg, _bmp, _webp):
        size = reader(data)
        if size is not None:
            return size
    return None


def decode(data: bytes, name: str | Path) -> np.ndarray:
    """A picture's bytes decoded as BGR, refused in one line, before decoding, when its
    header declares more than MAX_PIXELS."""
    size = declared_size(data)
    if size is not None and size[0] * size[1] > MAX_PIXELS:
        raise ImageError(
            f"{name}: it says it is {size[0]}x{size[1]} px, more than the "
            f"{MAX_PIXELS // 1_000_000} megapixels a tray photo may have"
        )
    try:
        image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    except cv2.error as err:  # beyond OpenCV's own pixel limit, for the other formats
        raise ImageError(f"{name}: cannot decode ({err.err})") from err
    if image is None:
        raise ImageError(f"{name}: not an image OpenCV can decode")
    return np.asarray(image)


def load_image(path: str | Path) -> np.ndarray:
    """Load a photo as BGR, refusing clearly anything that is not a decodable tray photo."""
    try:
        data = read_bounded(path, MAX_FILE_BYTES)
    except HostileFile as error:
        raise ImageError(f"cannot read {error}") from None
    if not data:
        raise ImageError(f"{path}: file is empty")
    return decode(data, path)
