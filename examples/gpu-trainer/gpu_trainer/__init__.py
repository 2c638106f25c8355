"""gpu_trainer: fine-tuning and serving for the support-ticket classifier."""

from gpu_trainer.model import TicketClassifier, ClassifierConfig

__all__ = ["TicketClassifier", "ClassifierConfig"]
__version__ = "0.4.0"
