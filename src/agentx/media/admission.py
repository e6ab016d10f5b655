"""Media admission (MOD-083), image normalization (MOD-084), PDF validation
(MOD-085) and runtime qualification (MOD-A14B); DECISIONS section 7.

Inputs and outputs are files: the upload shell streams chunks to a temporary
file, this module reads it from its path and writes a normalized image to a
second path, so the raw upload is never held whole in memory here. Decoded
pixels are bounded by the dimension check that runs before any decode
(at most 20,000,000 pixels). pypdf reads the whole file (at most 20 MiB)
into memory when it opens it; content streams are never decompressed.

pypdf is imported where it is used, so a broken pypdf install turns
attachments off through :func:`qualify_runtime` instead of breaking start-up.
"""

from __future__ import annotations

import io
import os
import struct
from pathlib import Path
from typing import Any

from msgspec import Struct
from PIL import Image, ImageCms, ImageOps, UnidentifiedImageError

from agentx.messages.attachment_limits import (
    MAX_IMAGE_DIMENSION,
    MAX_IMAGE_PIXELS,
    MAX_ITEM_BYTES,
    MAX_PDF_PAGES,
)
from agentx.messages.attachments import Reason

#: MOD-083 magic bytes per supported MIME claim.
MAGIC: dict[str, bytes] = {
    "image/png": b"\x89PNG\r\n\x1a\n",
    "image/jpeg": b"\xff\xd8\xff",
    "application/pdf": b"%PDF-",
}

#: MIME claim -> the only Pillow format it may decode as (MPO is not JPEG).
_IMAGE_FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG"}

#: Errors Pillow raises on malformed input (its decoders are not consistent).
_PILLOW_ERRORS = (
    UnidentifiedImageError,
    OSError,
    SyntaxError,
    ValueError,
    EOFError,
    IndexError,
    TypeError,
    KeyError,
    struct.error,
)

_JPEG_QUALITY = 95

#: ICC colour space -> the pixel mode the profile describes.
_PROFILE_MODES = {"RGB": "RGB", "GRAY": "L", "CMYK": "CMYK"}
_SRGB = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB"))


class Admitted(Struct, frozen=True, kw_only=True):
    """The bytes to store: ``path`` holds them (the normalized image, or the
    unchanged upload for a PDF)."""

    path: Path


class Rejected(Struct, frozen=True, kw_only=True):
    reason: Reason


Outcome = Admitted | Rejected


def check_magic(mime_type: str, head: bytes) -> Reason | None:
    """MOD-083: the file's first bytes must match the declared MIME."""
    magic = MAGIC.get(mime_type)
    if magic is None:
        return Reason.UNSUPPORTED_MIME_TYPE
    return None if head.startswith(magic) else Reason.MAGIC_MISMATCH


def admit(src: Path, mime_type: str, normalized: Path) -> Outcome:
    """Validate ``src`` for ``mime_type`` (MOD-083..085). An image is
    re-encoded into ``normalized``; a PDF is admitted as ``src`` itself."""
    with src.open("rb") as f:
        head = f.read(8)
    bad_magic = check_magic(mime_type, head)
    if bad_magic is not None:
        return Rejected(reason=bad_magic)
    if mime_type == "application/pdf":
        reason = validate_pdf(src)
        return Admitted(path=src) if reason is None else Rejected(reason=reason)
    return normalize_image(src, _IMAGE_FORMATS[mime_type], normalized)


# --- MOD-084 images --------------------------------------------------------


def normalize_image(src: Path, image_format: str, dest: Path) -> Outcome:
    """MOD-084: check dimensions before decoding, run ``verify()`` and
    ``load()`` on separate opens, reject multi-frame files, apply the EXIF
    orientation and the ICC profile (to sRGB), re-encode in the same format
    without metadata into ``dest``; over 20 MiB is ``image_too_large``.
    A rejection leaves no ``dest`` behind."""
    outcome = _normalize(src, image_format, dest)
    if isinstance(outcome, Rejected):
        dest.unlink(missing_ok=True)
    return outcome


def _normalize(src: Path, image_format: str, dest: Path) -> Outcome:
    # Process-wide guard: Pillow refuses (error) at twice this and warns
    # between; the explicit checks below reject before any decode either way.
    Image.MAX_IMAGE_PIXELS = MAX_IMAGE_PIXELS
    try:
        with Image.open(src, formats=(image_format,)) as probe:
            reason = _shape_rejection(probe, image_format)
            if reason is not None:
                return Rejected(reason=reason)
            probe.verify()
        with Image.open(src, formats=(image_format,)) as image:
            image.load()
            _write_normalized(image, image_format, dest)
    except Image.DecompressionBombError:
        return Rejected(reason=Reason.IMAGE_PIXELS_EXCEEDED)
    except (*_PILLOW_ERRORS, ImageCms.PyCMSError):
        return Rejected(reason=Reason.IMAGE_INVALID)
    if dest.stat().st_size > MAX_ITEM_BYTES:
        return Rejected(reason=Reason.IMAGE_TOO_LARGE)
    return Admitted(path=dest)


def _shape_rejection(image: Image.Image, image_format: str) -> Reason | None:
    """Format, size and frame count, all read from headers (no decode)."""
    if image.format != image_format:
        # Pillow reports a multi-picture JPEG as MPO even when asked for JPEG.
        return Reason.UNSUPPORTED_ANIMATION if image.format == "MPO" else Reason.IMAGE_INVALID
    width, height = image.size
    if width < 1 or height < 1:
        return Reason.IMAGE_INVALID
    if width > MAX_IMAGE_DIMENSION or height > MAX_IMAGE_DIMENSION:
        return Reason.IMAGE_DIMENSIONS_EXCEEDED
    if width * height > MAX_IMAGE_PIXELS:
        return Reason.IMAGE_PIXELS_EXCEEDED
    if getattr(image, "n_frames", 1) != 1 or getattr(image, "is_animated", False):
        return Reason.UNSUPPORTED_ANIMATION
    return None


def _write_normalized(image: Image.Image, image_format: str, dest: Path) -> None:
    """Orientation, then ICC to sRGB, then a metadata-free re-encode."""
    oriented = ImageOps.exif_transpose(image)
    # The one info key the output keeps: transparency is pixel semantics.
    transparency = oriented.info.get("transparency")
    icc = image.info.get("icc_profile")
    if icc:
        converted = _to_srgb(oriented, icc)
        if converted is not oriented:
            transparency = None  # now an alpha channel
        oriented = converted
    # Pillow copies comment/ICC/EXIF/XMP from ``info`` into the output by default.
    oriented.info = {}
    kept = {} if transparency is None else {"transparency": transparency}
    options: dict[str, Any] = {"format": image_format, **kept}
    if image_format == "JPEG":
        options["quality"] = _JPEG_QUALITY
    with dest.open("wb") as out:
        oriented.save(out, **options)
        out.flush()
        os.fsync(out.fileno())


def _to_srgb(image: Image.Image, icc: bytes) -> Image.Image:
    """Convert pixels from the embedded profile to sRGB (MOD-084), keeping
    any alpha. An unreadable profile cannot be applied and is only dropped
    (pixels are then taken as sRGB, as a viewer would)."""
    try:
        source = ImageCms.ImageCmsProfile(io.BytesIO(icc))
    except (OSError, ImageCms.PyCMSError):
        return image
    pixel_mode = _PROFILE_MODES.get(str(source.profile.xcolor_space).strip())
    if pixel_mode is None:
        raise ImageCms.PyCMSError("unsupported ICC colour space")
    alpha = image.convert("RGBA").getchannel("A") if image.has_transparency_data else None
    pixels = image if image.mode == pixel_mode else image.convert(pixel_mode)
    converted = ImageCms.profileToProfile(pixels, source, _SRGB, outputMode="RGB")
    assert converted is not None, "profileToProfile returns an image unless inPlace"
    if alpha is not None:
        converted.putalpha(alpha)
    return converted


# --- MOD-085 PDFs ----------------------------------------------------------


def validate_pdf(path: Path) -> Reason | None:
    """MOD-085: pypdf in strict mode, no decryption, pages counted by walking
    the page tree (never trusting ``/Count``). Content streams are never
    decompressed and no action runs; the caller stores the raw bytes
    unchanged. The ``%PDF-`` magic is checked first by :func:`admit`."""
    from pypdf import PdfReader  # noqa: PLC0415 - lazy on purpose (module docstring)
    from pypdf.errors import DependencyError  # noqa: PLC0415

    try:
        reader = PdfReader(path, strict=True)
        if reader.is_encrypted:
            return Reason.PDF_ENCRYPTED
        pages = _count_pages(reader.trailer["/Root"])
    except DependencyError:
        # Raised while opening only to set up decryption (AES without the
        # cryptography package): the file is encrypted.
        return Reason.PDF_ENCRYPTED
    except Exception:
        # pypdf raises many unrelated types on hostile input (PdfReadError,
        # KeyError, ValueError, UnicodeDecodeError, RecursionError on deep
        # nesting...): every one means the structure is not a valid PDF.
        return Reason.PDF_INVALID
    if pages is None or pages == 0:
        return Reason.PDF_INVALID
    return Reason.PDF_TOO_MANY_PAGES if pages > MAX_PDF_PAGES else None


def _count_pages(catalog: Any) -> int | None:
    """Leaves of the catalog's page tree, walked iteratively (no recursion);
    stops one past the limit. ``None`` for a loop, a node reached twice or a
    node that is neither ``/Pages`` nor ``/Page``."""
    from pypdf.generic import (  # noqa: PLC0415 - lazy on purpose (module docstring)
        ArrayObject,
        DictionaryObject,
        IndirectObject,
    )

    if not isinstance(catalog, DictionaryObject):
        return None
    stack = [catalog.get("/Pages")]
    seen: set[tuple[int, int]] = set()
    count = 0
    while stack:
        node = stack.pop()
        if isinstance(node, IndirectObject):
            key = (node.idnum, node.generation)
            if key in seen:
                return None
            seen.add(key)
            node = node.get_object()
        if not isinstance(node, DictionaryObject):
            return None
        node_type = node.get("/Type")
        if node_type == "/Page":
            count += 1
            if count > MAX_PDF_PAGES:
                return count
        elif node_type == "/Pages":
            kids = node.get("/Kids")
            if isinstance(kids, IndirectObject):
                kids = kids.get_object()
            if not isinstance(kids, ArrayObject):
                return None
            stack.extend(reversed(kids))
        else:
            return None
    return count


# --- MOD-A14B runtime qualification ------------------------------------------


def qualify_runtime() -> str | None:
    """MOD-A14B: ``None`` when the installed Pillow round-trips PNG and JPEG
    and pypdf imports; otherwise why attachments must stay unadvertised."""
    sample = Image.new("RGB", (4, 3), (200, 30, 60))
    for image_format in _IMAGE_FORMATS.values():
        buffer = io.BytesIO()
        try:
            sample.save(buffer, format=image_format)
            with Image.open(io.BytesIO(buffer.getvalue()), formats=(image_format,)) as back:
                back.load()
                size = back.size
        except _PILLOW_ERRORS as error:
            return f"Pillow cannot round-trip {image_format}: {type(error).__name__}"
        if size != sample.size:
            return f"Pillow cannot round-trip {image_format}: size changed"
    try:
        import pypdf  # noqa: F401, PLC0415 - the import is the check
    except ImportError as error:
        return f"pypdf does not import: {type(error).__name__}"
    return None
