# The mcp-actors command in a small image (deploy/kubernetes uses it):
#   docker build -t ghcr.io/mcp-actors/mcp-actors:v0.1.0 --build-arg VERSION=v0.1.0 .
FROM golang:1.27 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/mcp-actors ./cmd/mcp-actors

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/mcp-actors /usr/local/bin/mcp-actors
USER 65532:65532
EXPOSE 8080 6222
ENTRYPOINT ["/usr/local/bin/mcp-actors"]
