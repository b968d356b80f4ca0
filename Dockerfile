# The match server and the bundled players, installed as a package and run as an
# unprivileged user; docker-compose.yml builds every Python service from this file.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY server ./server
COPY players ./players
# A C compiler for the install only: it compiles the engine's hot modules (setup.py).
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && pip install . \
    && apt-get purge -y --auto-remove gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 ggp \
    && mkdir -p /var/lib/ggp/matches /var/lib/ggp/keys /var/lib/ggp/data /var/lib/ggp/engines \
    && chown -R ggp:ggp /var/lib/ggp \
    && chmod 700 /var/lib/ggp/engines

USER ggp
WORKDIR /home/ggp
# Match logs, the host's signing key, the service's data folder and the store of compiled
# engines; a named volume mounted on any of them starts out owned by the ggp user.
VOLUME ["/var/lib/ggp/matches", "/var/lib/ggp/keys", "/var/lib/ggp/data", "/var/lib/ggp/engines"]

CMD ["ggp", "--help"]
