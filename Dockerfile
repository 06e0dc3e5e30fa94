# tokcap for a cluster (examples/k8s/export-job.yaml): Node 22 on Debian slim (glibc: the
# platform tokcap is tested on, README.md "Platforms"), the packed tarball installed by the same
# script CI checks in a fresh prefix (scripts/install-tarball.sh), run as a non-root user.
#   npm pack && docker build -t registry.example.com/tokcap:0.1.0 .
FROM node:22-bookworm-slim
COPY tokcap-*.tgz scripts/install-tarball.sh /tmp/tokcap/
RUN sh /tmp/tokcap/install-tarball.sh /usr/local /tmp/tokcap/tokcap-*.tgz && rm -rf /tmp/tokcap /root/.npm
USER node
ENTRYPOINT ["tokcap"]
