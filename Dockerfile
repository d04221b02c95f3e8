# syntax=docker/dockerfile:1
# The loadgate engine as a container image: the static musl binary alone, on an empty image.
#   docker run --rm --user "$(id -u)" -v "$PWD:/work" ghcr.io/loadgate/loadgate run spec.yaml
# TLS needs nothing from the image: the engine and its exports trust the Mozilla roots compiled
# into the binary (webpki-roots; `tls.roots: platform` would find no store here).
#
# The release workflow builds it for linux/amd64 and linux/arm64 (docker buildx). The builder
# runs on the build machine's own platform (an amd64 one) and cross-compiles with
# scripts/release/package: the script that makes the release archives, and that
# scripts/check-release runs in CI for both musl targets.

FROM --platform=$BUILDPLATFORM rust:1-bookworm AS builder
# musl-gcc for ring's C on x86_64; clang and aarch64 objcopy for the aarch64 cross build.
# Unpinned: bookworm's current versions, as CI (scripts/check-release) gets them.
# hadolint ignore=DL3008
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    musl-tools clang binutils-aarch64-linux-gnu \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
ARG TARGETARCH
RUN case "$TARGETARCH" in \
      amd64) target=x86_64-unknown-linux-musl ;; \
      arm64) target=aarch64-unknown-linux-musl ;; \
      *) echo "no loadgate image for $TARGETARCH" >&2; exit 1 ;; \
    esac \
 && rustup target add "$target" \
 && scripts/release/package "$target" --profile release --out /dist \
 && mkdir /out \
 && tar -xzf "/dist/loadgate-$target.tar.gz" -C /out

FROM scratch
COPY --from=builder /out/loadgate/loadgate /loadgate
COPY --from=builder /out/loadgate/LICENSE-MIT /out/loadgate/LICENSE-APACHE /licenses/
# nobody: no root in the image, and none needed (a load test opens sockets, not ports < 1024).
USER 65534:65534
WORKDIR /work
ENTRYPOINT ["/loadgate"]
CMD ["--help"]
