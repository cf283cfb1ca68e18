"""The blocks-world suite: state model, generators, planners, readers, checker, prompts, re-scoring."""
