# syntax=docker/dockerfile:1
# The chartkeeper manager image: a static binary, the bundled charts and
# watches.yaml, on a distroless base, running as a non-root user.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd/ cmd/
COPY internal/ internal/
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags="-s -w -X github.com/chartkeeper/chartkeeper/internal/version.Version=${VERSION}" \
      -o /out/chartkeeper ./cmd/chartkeeper

FROM gcr.io/distroless/static-debian12:nonroot
WORKDIR /opt/chartkeeper
COPY --from=build /out/chartkeeper /usr/local/bin/chartkeeper
COPY watches.yaml ./watches.yaml
COPY charts/ ./charts/
# distroless "nonroot": uid/gid 65532
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/chartkeeper", "run"]
