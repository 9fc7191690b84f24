"""Tell a die from pixel noise: a die has structure at its own scale, noise only at a pixel's.

The finders and face readers answer whatever they are shown, and noise shows them dots
everywhere (a pure-noise photo read as dozens of 6s). What noise lacks is structure at the
scale of a die: white noise puts equal power at every frequency, so blurring it to the
scale of a die's pips leaves almost nothing, while a die's body, outline and pips stand
out as a block of colour against the tray. The measure is relative to white noise's own,
so it holds for any photo's brightness, contrast, noise level and camera.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from tidetower.vision.d6.find import MIN_DIE_PX, Candidate

REACH = 1.5
"""The square looked at spans this many die sides (and at least the smallest die the reader
reads, MIN_DIE_PX): the die and a rim of the tray around it, so the die's outline against
the tray counts as structure."""
BAND = 12
"""The die-scale band is that square blurred by a Gaussian of its side / BAND (a die side /
8: about a pip's size), leaving in white noise about BAND² / 4π, some 11, independent
samples per square."""
FINE_SIGMA = 1.0
"""The pixel-scale band: what a Gaussian of this sigma (pixels) blurs away."""


@dataclass(frozen=True)
class Detail:
    """A photo's pixels at the finest resolution the measure uses, and how many of them one
    work-image pixel spans (below 1 when the work image is an enlargement of the photo)."""

    pixels: np.ndarray
    per_work_px: float

    @classmethod
    def of(cls, photo: np.ndarray, work: np.ndarray) -> Detail:
        """Return the photo's own pixels, shrunk only by averaging whole blocks of them to
        no fewer than the work image's: block averages of white noise are white noise, where
        the work image's resampling (by 2.025, say) or enlargement would blur it."""
        h, w = photo.shape[:2]
        block = max(h, w) // max(work.shape[:2])
        if block >= 2:
            trimmed = photo[: h - h % block, : w - w % block]
            size = (w // block, h // block)
            photo = np.asarray(cv2.resize(trimmed, size, interpolation=cv2.INTER_AREA))
        return cls(photo, w / max(block, 1) / work.shape[1])


def structure(detail: Detail, c: Candidate) -> float:
    """Return how far a candidate's structure at a die's scale rises above white noise's:
    the variance left at the die's scale over the variance at the pixel's, divided by that
    ratio for white noise. About 1 for noise of any kind and strength; a die, hundreds."""
    crop = _square(detail, c)
    if min(crop.shape[:2]) < 2:
        return 0.0
    sigma = min(crop.shape[:2]) / BAND
    coarse = _blurred(crop, sigma)
    fine = crop - _blurred(crop, FINE_SIGMA)
    coarse_var, fine_var = _variance(coarse), _variance(fine)
    if fine_var <= 0.0:
        return float("inf") if coarse_var > 0.0 else 0.0
    return coarse_var / fine_var / white_noise_ratio(sigma)


def white_noise_ratio(sigma: float) -> float:
    """Return the die-scale over pixel-scale variance white noise has: the sums of squares
    of the two bands' filters, whatever the noise's distribution."""
    blur = _kernel(sigma)
    fine = -_kernel(FINE_SIGMA)
    fine[fine.shape[0] // 2, fine.shape[1] // 2] += 1.0
    return float((blur**2).sum() / (fine**2).sum())


def _square(detail: Detail, c: Candidate) -> np.ndarray:
    """Return the square around a candidate the measure looks at, clipped to the photo."""
    h, w = detail.pixels.shape[:2]
    x, y = c.x * detail.per_work_px, c.y * detail.per_work_px
    half = max(REACH * c.side * detail.per_work_px, MIN_DIE_PX) / 2
    x0, x1 = max(0, round(x - half)), min(w, round(x + half))
    y0, y1 = max(0, round(y - half)), min(h, round(y + half))
    return detail.pixels[y0:y1, x0:x1].astype(np.float32)


def _size(sigma: float) -> int:
    """Return the odd kernel size reaching four sigmas each way."""
    return 2 * int(np.ceil(4 * sigma)) + 1


def _kernel(sigma: float) -> np.ndarray:
    """Return the 2-D Gaussian kernel `_blurred` applies."""
    k = cv2.getGaussianKernel(_size(sigma), sigma, cv2.CV_64F)
    return np.asarray(k @ k.T)


def _blurred(image: np.ndarray, sigma: float) -> np.ndarray:
    """Return the image blurred by the Gaussian of `_kernel(sigma)`."""
    size = _size(sigma)
    return np.asarray(cv2.GaussianBlur(image, (size, size), sigma, borderType=cv2.BORDER_REFLECT))


def _variance(image: np.ndarray) -> float:
    """Return the variance over the pixels, summed over the colour channels; OpenCV sums
    in double precision, since a whole photo's float32 sums lose more than noise's
    die-scale variance."""
    _, std = cv2.meanStdDev(image)
    return float((np.asarray(std) ** 2).sum())
