# connect5 server image: the line protocol on port 1199, the HTTP API and web board on port 8080.
#
#   docker build -t connect5 .
#   docker run --rm -p 1199:1199 -p 8080:8080 connect5
#   docker run --rm -p 1199:1199 -p 8080:8080 connect5 --memory 1024 --max-connections 1024 \
#       --max-connections-per-ip 1024            # other limits: replace the CMD's arguments
#
# docs/operations.md explains the choices (sizing, health check, stopping).

ARG RUST_VERSION=1
ARG DEBIAN_RELEASE=bookworm

# Build stage: the toolchain and the sources; nothing of it reaches the final image but the binary.
FROM rust:${RUST_VERSION}-slim-${DEBIAN_RELEASE} AS build
WORKDIR /src
# Only what `cargo build` reads (build.rs reads the weight tables under src/; the manifest names
# the bench target, so its file must exist). .dockerignore keeps target/ and .git out.
COPY Cargo.toml Cargo.lock build.rs ./
COPY benches benches
COPY src src
# The release profile keeps debug information (40 MB); the image keeps the symbols a panic's
# backtrace names, without the line tables (6 MB).
RUN cargo build --release --locked \
    && install -m 0755 target/release/connect5 /connect5 \
    && strip --strip-debug /connect5

# Runtime stage: the same Debian release as the builder (the binary links against its glibc).
FROM debian:${DEBIAN_RELEASE}-slim
# busybox only for the HEALTHCHECK's HTTP request: one 0.8 MB package depending on libc alone,
# where curl would bring a dozen libraries (TLS, Kerberos, LDAP) that a plain GET on the loopback
# does not need. Its wget exits non-zero on a refused connection and on any non-2xx status, such as
# the 503 of a draining server. Its version is the release's current one (not pinned: a pin
# breaks the build at the release's next security update).
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends busybox \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --gid 10001 connect5 \
    && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin connect5
COPY --from=build /connect5 /usr/local/bin/connect5
USER 10001:10001
ENV RUST_LOG=info
EXPOSE 1199 8080
# Kubernetes ignores this and uses the Deployment's probes (deploy/kubernetes/); plain Docker,
# Compose and Swarm use it. HEALTHCHECK's --timeout bounds the request (bookworm's busybox wget
# crashes when given its own -T).
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD ["busybox", "wget", "-q", "-O", "/dev/null", "http://127.0.0.1:8080/healthz"]
# The server drains on SIGTERM (stops accepting, answers what is in flight, at most 3 s more for a
# long search) and exits 0, well within `docker stop`'s default 10 s grace.
STOPSIGNAL SIGTERM
# Fixed: the addresses, and `shutdown` refused to every client (behind a balancer all clients
# share the balancer's address, so the loopback rule of a lone server does not apply).
ENTRYPOINT ["connect5", "serve", "--listen", "0.0.0.0:1199", "--http", "0.0.0.0:8080", \
            "--no-shutdown-command"]
# Defaults an operator replaces: the memory bound (the container's memory limit should match it)
# and the connection limits. Every client of a replica behind a balancer arrives from the
# balancer's address, so the per-address limit is raised to the connection limit.
CMD ["--memory", "512", "--max-connections", "512", "--max-connections-per-ip", "512"]
