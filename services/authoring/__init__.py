"""The authoring tier: the rules of a valid drawer, HEAVY-SPLIT writes, and composition.

Drawers are framed here (ambient `add_drawer`, canonical `add_drawer_signed`, or composed
from raw sessions by a pluggable invoker) and written through the retrieval tier, which
owns the drawer pool. The pure domain lives in `services.authoring.core`.
"""
