"""The attachment limits and the advertised ``input_capabilities`` object
(spec "input_capabilities", WIRE-023; the limits WIRE-018..020 enforce).

Sans-IO and cheap to import: the capability is advertised in ``system/init``
and the ``initialize`` response, so this module is on the start path; the
reason codes, manifests and correlation check (:mod:`agentx.messages.attachments`)
load with the first attachment (start-up, DEC-CLI-3).
"""

from __future__ import annotations

from agentx.messages.frozen import FrozenDict, freeze

# --- limits (spec "input_capabilities" limits block) -----------------------

MIB = 1024 * 1024
MAX_ITEM_BYTES = 20 * MIB
MAX_AGGREGATE_BYTES = 40 * MIB
MAX_STORAGE_BYTES = 512 * MIB
MAX_ATTACHMENTS_PER_MESSAGE = 8
MAX_CONCURRENT_UPLOADS = 8
MAX_UPLOADS_PER_SESSION = 100_000
MAX_CHUNK_DECODED_BYTES = 262_144
MAX_CHUNK_ENCODED_BYTES = 349_528
MAX_DISPLAY_NAME_BYTES = 255
MAX_MIME_TYPE_BYTES = 64
MAX_IMAGE_DIMENSION = 8192
MAX_IMAGE_PIXELS = 20_000_000
MAX_PDF_PAGES = 100
UPLOAD_TIMEOUT_MS = 120_000

_IMAGE_POLICY = "decode_reencode_strip_metadata_reject_oversize_no_resize"
_PDF_POLICY = "validate_structure_no_execute_no_ocr_no_conversion"


def input_capabilities() -> FrozenDict:
    """The value of the ``input_capabilities`` member (``{"attachments": ...}``)
    of the native qualified attachment profile, exactly the spec's object
    (WIRE-023 section), frozen. Advertise it only when the profile allows
    attachments (DEC-AUTH-2) and :func:`agentx.media.admission.qualify_runtime` passed."""
    image_types = tuple(
        {
            "kind": "image",
            "mime_type": mime,
            "max_bytes": MAX_ITEM_BYTES,
            "max_dimension": MAX_IMAGE_DIMENSION,
            "max_pixels": MAX_IMAGE_PIXELS,
            "transform_policy": _IMAGE_POLICY,
        }
        for mime in ("image/png", "image/jpeg")
    )
    pdf_type = {
        "kind": "document",
        "mime_type": "application/pdf",
        "max_bytes": MAX_ITEM_BYTES,
        "max_pages": MAX_PDF_PAGES,
        "transform_policy": _PDF_POLICY,
    }
    capabilities: FrozenDict = freeze(
        {
            "attachments": {
                "protocol_version": 1,
                "sources": (
                    {"source": "file_path", "scope": "initial_cli"},
                    {"source": "stream_json_v1", "scope": "per_turn"},
                ),
                "media_types": (*image_types, pdf_type),
                "limits": {
                    "max_attachments_per_message": MAX_ATTACHMENTS_PER_MESSAGE,
                    "max_concurrent_uploads": MAX_CONCURRENT_UPLOADS,
                    "max_uploads_per_session": MAX_UPLOADS_PER_SESSION,
                    "max_item_bytes": MAX_ITEM_BYTES,
                    "max_aggregate_bytes": MAX_AGGREGATE_BYTES,
                    "max_storage_bytes": MAX_STORAGE_BYTES,
                    "max_model_request_media_bytes": MAX_AGGREGATE_BYTES,
                    "max_chunk_decoded_bytes": MAX_CHUNK_DECODED_BYTES,
                    "max_chunk_encoded_bytes": MAX_CHUNK_ENCODED_BYTES,
                    "max_display_name_bytes": MAX_DISPLAY_NAME_BYTES,
                    "max_mime_type_bytes": MAX_MIME_TYPE_BYTES,
                    "max_image_dimension": MAX_IMAGE_DIMENSION,
                    "max_image_pixels": MAX_IMAGE_PIXELS,
                    "max_pdf_pages": MAX_PDF_PAGES,
                    "upload_timeout_ms": UPLOAD_TIMEOUT_MS,
                },
                "provider_limits": {
                    "max_request_items": 100,
                    "max_encoded_media_bytes": 55_927_120,
                    "max_request_bytes": 67_108_864,
                    "max_ndjson_record_bytes": 8_388_608,
                },
            }
        }
    )
    return capabilities
