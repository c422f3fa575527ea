# Multi-stage build of the render-blueprint KRM function image.
# Stage 1 builds a static binary with the flags, profile and linker of scripts/build-static (glibc
# linked in; not position-independent, so start-up applies no relocations; whole-program LTO; the
# functions a run needs laid out together by scripts/link-hot-first, so a run maps less); stage 2
# is an empty image that holds only that binary and a passwd line so the function runs as
# `nobody`, as kpt and kustomize run it.
FROM docker.io/library/rust:1.95-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
COPY benches ./benches
COPY README.md ./
COPY scripts/link-hot-first scripts/hot-functions.txt ./scripts/
RUN CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER=/src/scripts/link-hot-first \
    RUSTFLAGS='-C target-feature=+crt-static -C relocation-model=static -C symbol-mangling-version=v0' \
    cargo build --profile dist --locked --target x86_64-unknown-linux-gnu \
 && cp target/x86_64-unknown-linux-gnu/dist/render-blueprint /render-blueprint \
 && echo 'nobody:x:65534:65534:nobody:/:/sbin/nologin' > /passwd

FROM scratch
COPY --from=build /passwd /etc/passwd
COPY --from=build /render-blueprint /usr/local/bin/render-blueprint
USER nobody
# An empty directory of its own: a package mounted here is the root, and nothing else in the
# image is package content (file reads from a root of / are refused).
WORKDIR /package
ENTRYPOINT ["/usr/local/bin/render-blueprint"]
