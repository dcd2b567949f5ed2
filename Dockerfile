# evalq: one image for every service (API, workers, beat, Flower, migrations).
#   docker build -t evalq:latest .
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1

# torch first, from the PyTorch CPU index: the PyPI Linux wheel pulls several GB of CUDA
# libraries. The `worker` extra pins torch==2.13.0, which the CPU build (2.13.0+cpu) satisfies.
RUN pip install --index-url https://download.pytorch.org/whl/cpu torch==2.13.0

WORKDIR /app
COPY pyproject.toml README.md ./
COPY src ./src
# The bundled examples are package data: `evalq demo` runs in the image as it is.
RUN pip install ".[worker,postgres,api,monitor,otel]" \
    && python -c "import evalq, torch; print('evalq', evalq.__name__, 'torch', torch.__version__)"

RUN useradd --create-home --uid 10001 evalq \
    && mkdir -p /var/lib/evalq && chown evalq /var/lib/evalq
USER evalq

EXPOSE 8000 5555
CMD ["evalq", "--help"]
