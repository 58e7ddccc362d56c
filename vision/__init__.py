"""Camera fallback: read a playing card from a camera frame, or decline when unsure.

Pipeline (one module per step): :mod:`vision.capture` (frames from a camera, a video, an RTSP
stream or image files) -> :mod:`vision.detect` (find the card, undo the perspective) ->
:mod:`vision.corner` (the corner index regions, as features) -> :mod:`vision.model` (a deck's
enrolment: nearest-neighbour classes, thresholds; saved per deck) -> :mod:`vision.recognise`
(frame in, :class:`~vision.recognise.Recognition` out). :mod:`vision.bench` measures it.
"""
