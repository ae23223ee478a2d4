// Package nintendoclients tests gamewire against Kinnay's NintendoClients
// (github.com/kinnay/NintendoClients, Python), a NEX implementation no one here
// wrote: NintendoClients' client logs in to gamewire's NEX server, and
// gamewire's client logs in to a server built from NintendoClients' own server
// classes.
//
// NintendoClients is not vendored (and PyPI is not reachable from the build
// machines): the tests run only when NINTENDOCLIENTS_DIR names a local copy of
// its nintendo/ package and of anynet (its networking library), and skip
// otherwise. docs/interop.md says how to make that copy, which Debian packages
// it needs and what the runs found. NINTENDOCLIENTS_PYTHON names the Python 3
// interpreter that has those packages (default: python3 from PATH).
//
// The Python drivers next to this file (nc_client.py, nc_server.py) are
// gamewire's own code; they only import NintendoClients.
package nintendoclients
