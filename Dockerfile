# The hotpath image: one static binary, nothing else. `hotpath load k8s` runs it
# as ENTRYPOINT with `load ...` as the pod's args.
#
#   docker build -t registry.example.com/hotpath:v1 .
#   docker push registry.example.com/hotpath:v1
#   hotpath load k8s --image registry.example.com/hotpath:v1 --shards 4 ... URL
#
# For other CPU architectures (the builder cross-compiles; nothing runs emulated):
#   docker buildx build --platform linux/amd64,linux/arm64 -t registry.example.com/hotpath:v1 --push .

# Build on the machine's own platform; GOOS/GOARCH pick the target's.
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
WORKDIR /src
# Modules first: this layer is reused until go.mod or go.sum change.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG TARGETOS TARGETARCH
# CGO_ENABLED=0: a static binary that needs no libc (the final image has none).
# -trimpath: no build machine paths in it. -ldflags=-s: no symbol table (smaller;
# panics still print file:line). The .git directory is not copied (.dockerignore),
# so `hotpath version` says (devel) with no commit.
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
	go build -trimpath -ldflags=-s -o /out/hotpath ./cmd/hotpath

# distroless static: CA certificates (for https:// targets), /etc/passwd with a
# nonroot user, tzdata; no shell, no package manager.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/hotpath /hotpath
# uid 65532 (nonroot), numeric so that Kubernetes can check runAsNonRoot.
USER 65532:65532
ENTRYPOINT ["/hotpath"]
CMD ["-h"]
