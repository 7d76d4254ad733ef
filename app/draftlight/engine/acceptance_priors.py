"""Auto's starting estimates of P(a guess is right) per place (and what the copied n-gram's
other occurrences went on with: acceptance.KEYS) and evidence bucket (acceptance.py): fitted by
`python -m draftlight.bench.fit_priors` on the recorded greedy answers in
app/draftlight/bench/recorded/ (docs/replay.md). "" is a guess with no place (a draft model):
n-gram hit rates of the project's prompt set with SmolLM2-135M, rounded down, as before places
were told apart."""

PRIORS = {
    "": (0.30, 0.40, 0.48, 0.65, 0.75, 0.82, 0.88, 0.92, 0.95, 0.96),
    "message": (0.30, 0.40, 0.62, 0.80, 0.85, 0.89, 0.93, 0.95, 0.97, 0.96),
    "earlier": (0.30, 0.40, 0.55, 0.68, 0.88, 0.92, 0.98, 0.94, 0.98, 0.98),
    "reply": (0.30, 0.40, 0.43, 0.61, 0.73, 0.80, 0.84, 0.96, 0.96, 0.96),
    "message/agree": (0.30, 0.40, 0.62, 0.70, 0.71, 0.94, 0.94, 0.97, 0.98, 0.98),
    "message/split": (0.30, 0.40, 0.10, 0.80, 0.69, 0.91, 0.94, 0.96, 0.98, 0.98),
    "earlier/agree": (0.30, 0.40, 0.55, 0.83, 0.93, 0.94, 0.97, 0.97, 0.98, 0.98),
    "earlier/split": (0.30, 0.40, 0.55, 0.68, 0.88, 0.92, 0.97, 0.97, 0.98, 0.97),
    "reply/agree": (0.30, 0.40, 0.68, 0.66, 0.76, 0.76, 0.94, 0.98, 0.96, 0.98),
    "reply/split": (0.30, 0.40, 0.19, 0.39, 0.56, 0.75, 0.93, 0.98, 0.93, 0.98),
    "prediction": (0.30, 0.40, 0.62, 0.80, 0.85, 0.89, 0.93, 0.95, 0.97, 0.96),
}
