// Package config is Shoal's table of server settings: one row (Param) per
// setting, with its name, aliases, kind of value, default, whether CONFIG SET
// may change it while the server runs, and a one-line description. The
// command line (--name), the environment (SHOAL_NAME), CONFIG GET and CONFIG
// SET all read the same Table, so adding a setting is adding a row to Params.
//
// A Table keeps a value for each row until the setting's owner takes it
// over with Own: from then on the value is read from the owner (the store
// for maxmemory, the listener for port, package kv for requirepass) and
// CONFIG SET applies to it, so no copy can disagree with the owner. A value
// given on the command line or in the environment is applied to its owner
// when the owner takes the row over.
//
// The package imports no other Shoal package; its error texts are those
// redis-server 7.0 gives for CONFIG SET, so they can be sent to clients as
// they are.
package config
