"""Auto's starting estimates of P(a guess is right) per place (and what the copied n-gram's
other occurrences went on with: acceptance.KEYS) and evidence bucket (acceptance.py): fitted by
`python -m draftlight.bench.fit_priors` on the recorded greedy answers in
app/draftlight/bench/recorded/ (docs/replay.md). "" is a guess with no place (a draft model):
n-gram hit rates of the project's prompt set with SmolLM2-135M, rounded down, as before places
were told apart."""

PRIORS = {
    "": (0.30, 0.40, 0.48, 0.65, 0.75, 0.82, 0.88, 0.92, 0.95, 0.96),
    "message": (0.30, 0.40, 0.61, 0.80, 0.85, 0.90, 0.91, 0.95, 0.98, 0.96),
    "earlier": (0.30, 0.40, 0.54, 0.70, 0.86, 0.92, 0.98, 0.94, 0.98, 0.98),
    "reply": (0.30, 0.40, 0.41, 0.61, 0.72, 0.80, 0.84, 0.96, 0.97, 0.94),
    "message/agree": (0.30, 0.40, 0.61, 0.66, 0.75, 0.96, 0.94, 0.97, 0.98, 0.98),
    "message/split": (0.30, 0.40, 0.11, 0.80, 0.70, 0.92, 0.94, 0.96, 0.98, 0.98),
    "earlier/agree": (0.30, 0.40, 0.54, 0.87, 0.91, 0.94, 0.97, 0.97, 0.98, 0.98),
    "earlier/split": (0.30, 0.40, 0.54, 0.70, 0.86, 0.92, 0.97, 0.97, 0.98, 0.97),
    "reply/agree": (0.30, 0.40, 0.68, 0.66, 0.76, 0.71, 0.94, 0.96, 0.96, 0.98),
    "reply/split": (0.30, 0.40, 0.20, 0.36, 0.61, 0.69, 0.93, 0.93, 0.93, 0.98),
    "prediction": (0.30, 0.40, 0.61, 0.80, 0.85, 0.90, 0.91, 0.95, 0.98, 0.96),
}
