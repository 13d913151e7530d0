# syntax=docker/dockerfile:1
# The worker image: one Python process = one SDK client = one elastic channel.
#
#   docker buildx build --platform linux/arm64,linux/amd64 -t elastic-native:0.1.0 .
#   (no Docker here: scripts/build_image.sh builds it with buildah)
#
# The build stage always runs on the build machine's own architecture and
# cross-compiles for the target one, and the runtime stage has no RUN step, so a
# multi-arch build needs no emulation.
ARG BUILDER_IMAGE=rust:1.95-slim-bookworm
ARG RUNTIME_IMAGE=python:3.11-slim-bookworm

# --- build: the abi3 wheel, and every runtime dependency, for the target platform ----
FROM --platform=$BUILDPLATFORM ${BUILDER_IMAGE} AS build
ARG TARGETARCH
# PyPI publishes this SDK as cp39-abi3 wheels for manylinux_2_24_x86_64 and
# manylinux_2_26_aarch64 (Graviton; glibc >= 2.26, the runtime's bookworm has 2.36).
ARG SNOWPIPE_STREAMING_VERSION=1.9.1
ARG MATURIN_VERSION=1.16.0
SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# Debian's packages move within a stable release: pin the release (the base image),
# not each package version. A cross build also gets the target's Python headers and sysconfig data (multiarch),
# for a dependency PyPI has no wheel of for the target (see install_target.sh).
# hadolint ignore=DL3008
RUN cross=(); \
    if [ "$TARGETARCH" = arm64 ] && [ "$(uname -m)" != aarch64 ]; then \
        dpkg --add-architecture arm64; \
        cross=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross libpython3.11-dev:arm64); \
    elif [ "$TARGETARCH" = amd64 ] && [ "$(uname -m)" != x86_64 ]; then \
        dpkg --add-architecture amd64; \
        cross=(gcc-x86-64-linux-gnu libc6-dev-amd64-cross libpython3.11-dev:amd64); \
    fi; \
    apt-get update \
    && apt-get install -y --no-install-recommends \
        ca-certificates gcc libc6-dev python3 python3-dev python3-venv "${cross[@]}" \
    && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /opt/build \
    && /opt/build/bin/pip install --no-cache-dir "maturin==${MATURIN_VERSION}"

WORKDIR /src
COPY Cargo.toml Cargo.lock pyproject.toml README.md ./
COPY src ./src
COPY benches ./benches
COPY python ./python
COPY deploy/image/install_target.sh /usr/local/bin/install_target

# The wheel for the target, then it (with the monitor's extra) and the SDK into
# /opt/app; console scripts (elastic-channels) get a shebang the runtime has instead
# of the build venv's python.
RUN case "$TARGETARCH" in \
        amd64) target=x86_64-unknown-linux-gnu; arch=x86_64 ;; \
        arm64) target=aarch64-unknown-linux-gnu; arch=aarch64 ;; \
        *) echo "unsupported TARGETARCH '$TARGETARCH' (amd64 or arm64)" >&2; exit 1 ;; \
    esac; \
    if [ "$(uname -m)" != "$arch" ]; then \
        rustup target add "$target"; \
        export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc; \
        export CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER=x86_64-linux-gnu-gcc; \
    fi; \
    /opt/build/bin/maturin build --release --locked --target "$target" --out /wheels \
        || exit 1; \
    wheel=$(ls /wheels/*.whl); \
    PYTHON=/opt/build/bin/python install_target "$arch" /opt/app "${wheel}[monitor]" \
        "snowpipe-streaming==${SNOWPIPE_STREAMING_VERSION}" || exit 1; \
    test -f /opt/app/snowflake/ingest/streaming/_python_ffi.abi3.so \
    || { echo "snowpipe-streaming installed without its native core" >&2; exit 1; }; \
    sed -i '1s|^#!.*python.*$|#!/usr/bin/env python3|' /opt/app/bin/*

# --- runtime: CPython 3.11 + what the build stage installed, nothing else -------------
# --platform=$TARGETPLATFORM is docker's default; buildah 1.28 needs it said, or it
# looks for the runtime base under the build stage's platform once COPY --from is used.
# hadolint ignore=DL3065
FROM --platform=$TARGETPLATFORM ${RUNTIME_IMAGE}
LABEL org.opencontainers.image.title="elastic-native worker" \
      org.opencontainers.image.description="Snowpipe Streaming elastic-channel worker with the native row generator" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /opt/app /opt/app
ENV PYTHONPATH=/opt/app \
    PATH=/opt/app/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    SS_LOG_LEVEL=warn \
    SS_LOG_TARGET=stderr \
    ELASTIC_FAST_JSON_ENCODE=true
USER 10001:10001
WORKDIR /tmp
# The worker; Kubernetes `args` (deploy/templates/job.yaml) are its arguments.
ENTRYPOINT ["python3", "-m", "elastic_channels.k8s_worker"]
