"""Canvas tasks and their registry: adding a task is one module here and one line in TASKS."""

from common.canvas.tasks.base import Impossible, Questions, Task
from common.canvas.tasks.coordinate import CoordinateTask
from common.canvas.tasks.count import CountTask
from common.canvas.tasks.existence import ExistenceTask
from common.canvas.tasks.existence_tracking import ExistenceTrackingTask
from common.canvas.tasks.shuffle_tracking import ShuffleTrackingTask
from common.canvas.tasks.transitivity import TransitivityTask

TASKS: dict[str, type[Task]] = {
    "existence": ExistenceTask,
    "count": CountTask,
    "transitivity": TransitivityTask,
    "coordinate": CoordinateTask,
    "existence_tracking": ExistenceTrackingTask,
    "shuffle_tracking": ShuffleTrackingTask,
}

__all__ = ["TASKS", "Impossible", "Questions", "Task"]
