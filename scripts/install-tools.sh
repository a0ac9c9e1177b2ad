#!/usr/bin/env bash
# Installs the pinned code-generation and inspection tools into ./.bin (git-ignored).
# Re-running is cheap: a tool whose pinned version is already present is skipped.
#
#   scripts/install-tools.sh                 every tool
#   scripts/install-tools.sh --codegen-only  buf, the protoc plugins and oapi-codegen
#   scripts/install-tools.sh grpcurl ...     only the tools named (make test: grpcurl gotestsum)
#   scripts/install-tools.sh jaeger          the topology's Jaeger, only ever when named (a
#                                            build of several minutes the first time)
set -euo pipefail

tools=(buf protoc-gen-go protoc-gen-go-grpc protoc-gen-grpc-gateway protoc-gen-openapiv2 oapi-codegen grpcurl gotestsum jaeger)
codegen_only=false
only=()
for arg in "$@"; do
  case " --codegen-only ${tools[*]} " in
    *" $arg "*) ;;
    *) echo "install-tools.sh: unknown tool $arg (known: ${tools[*]})" >&2; exit 2 ;;
  esac
  if [ "$arg" = --codegen-only ]; then codegen_only=true; else only+=("$arg"); fi
done
# want NAME: true when NAME is to be installed by this run.
want() {
  if [ ${#only[@]} -gt 0 ]; then [[ " ${only[*]} " == *" $1 "* ]]; else [ "$1" != jaeger ]; fi
}

root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/.bin"
mkdir -p "$bin"

BUF_VERSION=1.75.0
PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2
GRPC_GATEWAY_VERSION=v2.32.0
# Makes gen/openapiclient, the Go client of the OpenAPI document that the
# gateway's tests call every REST operation with.
OAPI_CODEGEN_VERSION=v2.8.2
GRPCURL_VERSION=v1.9.4
# Runs go test for make test and prints each test as it ends, then every
# failure in full: go test alone says nothing until a package is done.
GOTESTSUM_VERSION=v1.13.0

# stamp NAME VERSION: true when NAME at VERSION is already installed.
stamp() { [ -x "$bin/$1" ] && [ "$(cat "$bin/.$1.version" 2>/dev/null)" = "$2" ]; }
mark() { echo "$2" >"$bin/.$1.version"; }

goinstall() { # name module version
  if ! want "$1" || stamp "$1" "$3"; then return; fi
  echo "installing $1 $3" >&2
  GOBIN="$bin" GOFLAGS=-mod=mod go install "$2@$3"
  mark "$1" "$3"
}

if want buf && ! stamp buf "$BUF_VERSION"; then
  echo "installing buf $BUF_VERSION" >&2
  if command -v npm >/dev/null 2>&1; then
    # The npm package ships the release binary, which installs in seconds.
    npm install --silent --no-audit --no-fund --prefix "$bin/npm" "@bufbuild/buf@$BUF_VERSION" >&2
    ln -sf "$bin/npm/node_modules/.bin/buf" "$bin/buf"
  else
    GOBIN="$bin" go install "github.com/bufbuild/buf/cmd/buf@v$BUF_VERSION"
  fi
  mark buf "$BUF_VERSION"
fi

goinstall protoc-gen-go google.golang.org/protobuf/cmd/protoc-gen-go "$PROTOC_GEN_GO_VERSION"
goinstall protoc-gen-go-grpc google.golang.org/grpc/cmd/protoc-gen-go-grpc "$PROTOC_GEN_GO_GRPC_VERSION"
goinstall protoc-gen-grpc-gateway github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-grpc-gateway "$GRPC_GATEWAY_VERSION"
goinstall protoc-gen-openapiv2 github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-openapiv2 "$GRPC_GATEWAY_VERSION"
goinstall oapi-codegen github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen "$OAPI_CODEGEN_VERSION"
if ! $codegen_only; then
  goinstall grpcurl github.com/fullstorydev/grpcurl/cmd/grpcurl "$GRPCURL_VERSION"
  goinstall gotestsum gotest.tools/gotestsum "$GOTESTSUM_VERSION"
fi

# Jaeger's module replaces one of its dependencies, so go install
# module@version refuses it: it is built from tools/jaeger, a module of its
# own whose go.mod and go.sum pin it and everything it uses. Its version is
# the one that go.mod requires.
if want jaeger; then
  JAEGER_VERSION=$(cd "$root/tools/jaeger" && go list -m -f '{{.Version}}' github.com/jaegertracing/jaeger)
  if ! stamp jaeger "$JAEGER_VERSION"; then
    echo "installing jaeger $JAEGER_VERSION (several minutes the first time)" >&2
    (cd "$root/tools/jaeger" && GOBIN="$bin" go install github.com/jaegertracing/jaeger/cmd/jaeger)
    mark jaeger "$JAEGER_VERSION"
  fi
fi
