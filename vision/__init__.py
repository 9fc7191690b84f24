"""Tide Tower vision: read the dice in a photo of the tray (see docs/vision.md)."""

import os

# OpenCV reads its pixel limit once, as it loads: set before any module here imports cv2,
# so a picture in a format vision/pictures.py does not parse meets the same bound.
os.environ.setdefault("OPENCV_IO_MAX_IMAGE_PIXELS", "64000000")
