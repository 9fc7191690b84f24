"""Parts as triangle meshes (numpy), for the previews and the geometric checks."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tidetower.enclosure.cad.shapes import Solid

FloatArray = np.ndarray


@dataclass(frozen=True)
class Mesh:
    """Triangles of a solid, outward-wound, with the B-rep face each came from."""

    triangles: FloatArray
    """(n, 3, 3): three corners of each triangle."""
    faces: np.ndarray
    """(n,): index of the solid's face each triangle lies on."""

    @property
    def normals(self) -> FloatArray:
        """Unit outward normals, one a triangle."""
        t = self.triangles
        n = np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0])
        length = np.linalg.norm(n, axis=1, keepdims=True)
        return np.asarray(n / np.where(length == 0, 1, length))

    @property
    def areas(self) -> FloatArray:
        t = self.triangles
        return np.asarray(
            np.linalg.norm(np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0]), axis=1) / 2
        )

    def volume(self) -> float:
        """Signed volume (positive when the triangles wind outward)."""
        t = self.triangles
        return float(np.einsum("ij,ij->i", t[:, 0], np.cross(t[:, 1], t[:, 2])).sum() / 6)


def mesh(solid: Solid, tolerance: float = 0.2, angular: float = 0.3) -> Mesh:
    """Tessellate a solid face by face, keeping which face each triangle is from."""
    triangles, faces = [], []
    for index, face in enumerate(solid.faces()):
        vertices, tris = face.tessellate(tolerance, angular)
        if not tris:
            continue
        v = np.array([(p.X, p.Y, p.Z) for p in vertices], dtype=float)
        triangles.append(v[np.array(tris)])
        faces.append(np.full(len(tris), index))
    return Mesh(np.concatenate(triangles), np.concatenate(faces))
