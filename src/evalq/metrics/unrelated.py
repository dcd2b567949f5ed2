"""Reviews of papers no task is about: how close review wording alone comes to a task's references.

Tier 1 reads a run's similarity between two anchors measured on the task's own references: the
*ceiling*, how much the references agree with one another, and the *floor*, how much these
reviews of unrelated papers agree with them. Text at the floor shares only the language of
reviewing with the references (another paper's review, generic praise) and earns nothing.

The reviews below are evalq's own, written for this purpose about invented papers in several
fields; they are not taken from any dataset (the benchmark's real reviews are kept apart from
them, so the floor is not fitted to its test). Each reads like an ordinary conference review:
a summary, strengths, weaknesses, questions and a verdict.
"""

from __future__ import annotations

UNRELATED_REVIEWS: tuple[str, ...] = (
    "The paper studies whether a small graph neural network can predict the solubility of "
    "organic molecules from their bond graphs. The authors add a pooling layer that weights "
    "atoms by their ring membership and report lower error than two published baselines on a "
    "public benchmark. The writing is mostly clear. My main concern is the evaluation: the "
    "split is random rather than by scaffold, so near-duplicate molecules can leak between "
    "train and test, and the gains may not hold. I would also like to see the variance over "
    "seeds. Borderline; I lean towards rejection unless a scaffold split is added.",
    "This submission proposes a curriculum for reinforcement learning agents in grid-world "
    "navigation, ordering levels by an estimate of their difficulty from the agent's own value "
    "function. The idea is simple and the ablations are careful. However, the environments are "
    "small, the comparison with prior curriculum methods is limited to one baseline, and it is "
    "unclear how the difficulty estimate behaves early in training when the value function is "
    "poor. The related work section misses several recent papers. I think the paper is a "
    "reasonable workshop contribution but not yet ready for the main conference.",
    "The authors present a dataset of annotated street scenes collected in rainy and foggy "
    "weather, with pixel-level labels for twelve classes, and benchmark three segmentation "
    "models on it. A dataset like this is useful to the community and the annotation protocol "
    "is described in detail. The benchmark section is thin: the models are trained with default "
    "settings and no analysis explains why performance drops in fog. Licensing and consent for "
    "the recorded images are not discussed. I recommend a weak accept, conditional on a clearer "
    "statement of the licence and a deeper error analysis.",
    "This work analyses the convergence of stochastic gradient descent with momentum on "
    "non-convex objectives that satisfy a Polyak-Lojasiewicz condition, and derives a rate that "
    "improves the dependence on the condition number. The proofs appear correct as far as I "
    "checked them, though the appendix is dense and several constants are not defined where they "
    "are used. The experiments on logistic regression add little. The contribution is "
    "incremental relative to existing analyses, and the paper should explain more plainly what "
    "is new. Weak reject.",
    "The paper introduces a method for compressing language models by pruning attention heads "
    "according to a gradient-based importance score, followed by a short distillation phase. "
    "Results on three classification tasks show that half of the heads can be removed with a "
    "small drop in accuracy. The method is close to earlier head-pruning work and the novelty is "
    "modest. Missing are measurements of actual speed-up on hardware, and a comparison at equal "
    "parameter count with a smaller model trained from scratch. Clear writing, limited "
    "significance; I would not argue for acceptance.",
    "The submission describes a speech recognition system for low-resource languages that "
    "pre-trains on untranscribed audio and fine-tunes with one hour of labelled speech. Word "
    "error rates improve over a supervised baseline in four languages. The experimental section "
    "is solid and the authors release code. I have questions about the choice of languages, all "
    "of which have large amounts of untranscribed audio online, and about how the tokenizer was "
    "chosen. Overall a well executed and useful paper; accept.",
    "The authors propose to explain image classifiers by generating counterfactual images with a "
    "conditional diffusion model and report a user study in which participants predicted the "
    "classifier's decisions more accurately after seeing the explanations. The motivation is good "
    "and the figures are convincing. The user study is small, its statistics are not reported "
    "with intervals, and there is no comparison with simpler saliency maps. It is also unclear "
    "whether the generated images stay on the data manifold. Promising, but the evaluation needs "
    "work before publication.",
    "This paper tackles time-series forecasting for electricity demand with a transformer that "
    "mixes calendar features into the attention scores. The reported improvements over "
    "gradient-boosted trees are small and come from a single dataset, and the hyperparameter "
    "search for the baselines is not described, so the comparison may not be fair. The paper is "
    "easy to follow and the problem matters in practice. I encourage the authors to test on "
    "more datasets and report training cost. In its current form I recommend rejection.",
)
"""Eight reviews of invented papers (computer vision, learning theory, speech, chemistry,
reinforcement learning, forecasting, interpretability, model compression)."""
