# syntax=docker/dockerfile:1
# k6 with k6/x/llmstream compiled in, plus llm-sim, in a small non-root image.
#   docker build -t xk6-llmstream .
#   docker run --rm -v "$PWD:/scripts" -e LLM_BASE_URL=https://... xk6-llmstream run /scripts/test.js
# The build stage runs the Makefile's own targets (make k6 llm-sim: go build -trimpath
# with CGO_ENABLED=0), so the image holds the same binaries as a local build.

ARG GO_VERSION=1.26
ARG ALPINE_VERSION=3.22

FROM golang:${GO_VERSION} AS build
WORKDIR /src
# Modules first: this layer is reused until go.mod or go.sum change.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN make k6 llm-sim

FROM alpine:${ALPINE_VERSION}
# CA certificates for HTTPS providers; a shell for k6-operator's initializer (sh -c).
RUN apk add --no-cache ca-certificates tzdata \
 && adduser -D -u 12345 -g 12345 k6
COPY --from=build /src/k6 /src/llm-sim /usr/bin/
USER 12345
WORKDIR /home/k6
ENTRYPOINT ["k6"]
