# mfree -- set-up, build, demo and tests in two commands:
#   make demo   installs missing Debian packages (as root; otherwise prints the apt-get line; a missing
#               optional one never stops the set-up), configures, builds and runs mfree-poisson on its
#               default 3D problem
#   make test   the same set-up, then the CTest suite
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
DEBS = cmake make gcc g++ libp4est-dev libopenmpi-dev openmpi-bin valgrind pkg-config
# Optional: VTK's Python module, with which the tests read the ParaView output back (tests vtu_read*),
# and PETSc for apps/examples/petsc.c. Installed like the others when missing and run as root, but a
# failure only prints a note: without VTK those tests report "skipped", without PETSc the example and
# its tests are left out.
OPTIONAL_DEBS = python3-vtk9 libpetsc-real-dev gmsh libscotch-dev
GENERATOR := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")

.PHONY: all deps configure build demo test clean

all: build

deps:
	@if command -v dpkg >/dev/null 2>&1; then \
	  missing=""; \
	  for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	  if [ -n "$$missing" ]; then \
	    if [ "$$(id -u)" = 0 ]; then \
	      echo "mfree: installing Debian packages:$$missing"; \
	      export DEBIAN_FRONTEND=noninteractive; \
	      apt-get install -y -q $$missing >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q $$missing >/dev/null; } \
	        || { echo "mfree: apt-get install failed for:$$missing"; exit 1; }; \
	    else \
	      echo "mfree: missing Debian packages; install them with:"; \
	      echo "  sudo apt-get install -y$$missing"; exit 1; \
	    fi; \
	  fi; \
	  missing=""; \
	  for p in $(OPTIONAL_DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	  if [ -n "$$missing" ]; then \
	    if [ "$$(id -u)" = 0 ]; then \
	      echo "mfree: installing optional Debian packages:$$missing"; \
	      export DEBIAN_FRONTEND=noninteractive; \
	      apt-get install -y -q $$missing >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q $$missing >/dev/null 2>&1; } \
	        || echo "mfree: optional packages not installed ($$missing); what needs them is skipped or left out"; \
	    else \
	      echo "mfree: optional packages missing (what needs them is skipped or left out):$$missing"; \
	      echo "  sudo apt-get install -y$$missing"; \
	    fi; \
	  fi; \
	fi

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)

configure: deps $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(BUILD)/apps/mfree-poisson

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD)
