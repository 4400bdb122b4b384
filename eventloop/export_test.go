package eventloop

// The test helpers the conformance suite (package eventloop_test) shares
// with this package's own tests: one test binary holds both, so one copy
// serves.
var (
	StartServer           = startServer
	NewStartedServer      = newStartedServer
	Dial                  = dial
	ReadN                 = readN
	WaitFor               = waitFor
	ServeKilo             = serveKilo
	ServeSized            = serveSized
	KiloRequests          = kiloRequests
	ReadKiloReplies       = readKiloReplies
	NumberedLines         = numberedLines
	EachLine              = eachLine
	CPUTime               = cpuTime
	StallLoop             = stallLoop
	ShutdownInBackground  = shutdownInBackground
	ReadToEOF             = readToEOF
	ExpectEOF             = expectEOF
	ExpectTailsAfterDrain = expectTailsAfterDrain
	TestTLS               = testTLS
)

// CloseLog is the OnClose that records each close's error.
type CloseLog = closeLog

// KiloReplySize is the length of each of ServeKilo's replies.
const KiloReplySize = kiloReplySize

// ServesTLS reports whether s's main address is a TLS port.
func ServesTLS(s *Server) bool { return s.listeners[0].tls != nil }
