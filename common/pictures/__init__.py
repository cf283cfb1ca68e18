"""Pictures of a suite's scenes for vision-language models: drawn once per scene, byte for byte
the same on every run and machine, and readable back from their pixels.

``modality`` names what a set shows a model (``text``, ``image``, ``text+image``) and how a
results label says it; ``store`` names a picture by its scene (content addressed) and writes it
once as a deterministic PNG; ``glyphs`` draws and reads text in one fixed font, so a picture's
labels are read back exactly. A suite draws its own scenes (``common/blocks/picture.py``,
``common/canvas/picture.py``) with these, and the models layer sends them
(``common.models.images``).
"""
