package kv

// Reply texts of redis-server 7.0, without the leading '-'. Keeping them in
// one place makes the byte-for-byte comparison with Redis easy to audit.
const (
	errSyntax         = "ERR syntax error"
	errNotInteger     = "ERR value is not an integer or out of range"
	errNotFloat       = "ERR value is not a valid float"
	errNoAuth         = "NOAUTH Authentication required."
	errWrongPass      = "WRONGPASS invalid username-password pair or user is disabled."
	errNoProto        = "NOPROTO unsupported protocol version"
	errDBRange        = "ERR DB index is out of range"
	errInvalidCursor  = "ERR invalid cursor"
	errNoSuchClient   = "ERR No such client"
	errDecrOverflow   = "ERR decrement would overflow"
	errExpireConflict = "ERR NX and XX, GT or LT options at the same time are not compatible"
	errGTLTConflict   = "ERR GT and LT options at the same time are not compatible"
	errClientName     = "ERR Client names cannot contain spaces, newlines or special characters."
	errAuthNoPass     = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
	errHelloNoAuth    = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"
	errProtoVersion   = "ERR Protocol version is not an integer or out of range"
	errMaxClients     = "ERR max number of clients reached"
	errNoConfigFile   = "ERR The server is running without a config file"
)

// errInvalidExpire returns Redis's error for an expire time that is not
// positive or overflows, naming the command in lower case as Redis does.
func errInvalidExpire(cmd string) string {
	return "ERR invalid expire time in '" + cmd + "' command"
}

// errWrongArgs is Redis's arity error; name is the command's full name
// ("get", "client|setname").
func errWrongArgs(name string) string {
	return "ERR wrong number of arguments for '" + name + "' command"
}
