"""Auto's starting estimates of P(a guess is right) per place and evidence bucket
(acceptance.py): fitted by `python -m draftlight.bench.fit_priors` on the recorded greedy answers
in app/draftlight/bench/recorded/ (docs/replay.md). "" is a guess with no place (a draft model):
n-gram hit rates of the project's prompt set with SmolLM2-135M, rounded down, as before places
were told apart."""

PRIORS = {
    "": (0.30, 0.40, 0.48, 0.65, 0.75, 0.82, 0.88, 0.92, 0.95, 0.96),
    "message": (0.30, 0.40, 0.55, 0.79, 0.85, 0.89, 0.93, 0.95, 0.97, 0.96),
    "earlier": (0.30, 0.40, 0.48, 0.69, 0.89, 0.92, 0.98, 0.96, 0.98, 0.98),
    "reply": (0.30, 0.40, 0.43, 0.60, 0.72, 0.79, 0.87, 0.97, 0.96, 0.98),
    "prediction": (0.30, 0.40, 0.55, 0.79, 0.85, 0.89, 0.93, 0.95, 0.97, 0.96),
}
