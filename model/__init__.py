"""The abstract protocol the coordinator must refine: State, enabled/step, graphs (core, networkx)."""
from model.profiles import MODEL_PROFILES, ModelProfile, get_model_profile
from model.state import AbstractAction, Scope, Slot, State, initial
from model.step import enabled, step, successors

__all__ = ["AbstractAction", "MODEL_PROFILES", "ModelProfile", "Scope", "Slot", "State", "enabled",
           "get_model_profile", "initial", "step", "successors"]
