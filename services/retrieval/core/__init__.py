"""The retrieval tier's pure core: the 6-signal scorer, its constants, and intent guessing.
The type libraries it scores with are the shared vocabulary (`services.vocabulary`).

No I/O and no gRPC here; the servicer translates protobuf to these types and back.
"""

from services.retrieval.core.dampening import (
    DampeningProfile,
    SignalDampening,
    confidence_level,
    damp,
    dampen,
    entropy,
)
from services.retrieval.core.intent import IntentGuess, IntentModel, load_intent_model
from services.retrieval.core.salience import bumped_salience, effective_salience, salience_weight
from services.retrieval.core.scoring import (
    Candidate,
    PinStatus,
    RankerMode,
    Ranking,
    ScoreBreakdown,
    ScoredCandidate,
    ScoringContext,
    default_min_relevance,
    default_n_results,
    is_diary_room,
    rank,
    select,
)

__all__ = [
    "Candidate",
    "DampeningProfile",
    "IntentGuess",
    "IntentModel",
    "PinStatus",
    "RankerMode",
    "Ranking",
    "ScoreBreakdown",
    "ScoredCandidate",
    "ScoringContext",
    "SignalDampening",
    "bumped_salience",
    "confidence_level",
    "damp",
    "dampen",
    "default_min_relevance",
    "default_n_results",
    "effective_salience",
    "entropy",
    "is_diary_room",
    "load_intent_model",
    "rank",
    "salience_weight",
    "select",
]
