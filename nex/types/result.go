package types

import "fmt"

// Result is a NEX result code ("Result" in types.md). The most significant bit marks
// an error. Codes are named as NintendoClients' nintendo/nex/errors.py names them;
// the constants below carry the error bit, so they can be sent as they are.
type Result uint32

// ResultErrorMask is the bit that marks an error.
const ResultErrorMask Result = 1 << 31

// ResultSuccess is the success code NEX servers send (Core::Unknown without the
// error bit, 0x00010001).
const ResultSuccess Result = 0x00010001

// Result codes used by the core protocols. See errors.py for the full list.
const (
	CoreUnknown               Result = 0x80010001
	CoreNotImplemented        Result = 0x80010002
	CoreInvalidPointer        Result = 0x80010003
	CoreOperationAborted      Result = 0x80010004
	CoreException             Result = 0x80010005
	CoreAccessDenied          Result = 0x80010006
	CoreInvalidHandle         Result = 0x80010007
	CoreInvalidIndex          Result = 0x80010008
	CoreOutOfMemory           Result = 0x80010009
	CoreInvalidArgument       Result = 0x8001000A
	CoreTimeout               Result = 0x8001000B
	CoreInitializationFailure Result = 0x8001000C
	CoreCallInitiationFailure Result = 0x8001000D
	CoreRegistrationError     Result = 0x8001000E
	CoreBufferOverflow        Result = 0x8001000F
	CoreInvalidLockState      Result = 0x80010010
	CoreInvalidSequence       Result = 0x80010011

	RendezVousConnectionFailure       Result = 0x80030001
	RendezVousNotAuthenticated        Result = 0x80030002
	RendezVousInvalidUsername         Result = 0x80030064
	RendezVousInvalidPassword         Result = 0x80030065
	RendezVousUsernameAlreadyExists   Result = 0x80030066
	RendezVousAccountDisabled         Result = 0x80030067
	RendezVousAccountExpired          Result = 0x80030068
	RendezVousConcurrentLoginDenied   Result = 0x80030069
	RendezVousEncryptionFailure       Result = 0x8003006A
	RendezVousInvalidPID              Result = 0x8003006B
	RendezVousMaxConnectionsReached   Result = 0x8003006C
	RendezVousInvalidGID              Result = 0x8003006D
	RendezVousInvalidConfiguration    Result = 0x80030076
	RendezVousSessionVoid             Result = 0x80030073
	RendezVousDDLMismatch             Result = 0x80030075
	RendezVousClassNotFound           Result = 0x80030072
	RendezVousInvalidOperationLiveEnv Result = 0x8003006F

	AuthenticationNASAuthenticateError Result = 0x80680001
	AuthenticationTokenParseError      Result = 0x80680002
	AuthenticationTokenExpired         Result = 0x80680006
	AuthenticationValidationFailed     Result = 0x80680007
	AuthenticationInvalidParam         Result = 0x80680008
	AuthenticationPrincipalIDUnmatched Result = 0x80680009
	AuthenticationUnderMaintenance     Result = 0x8068000B
	AuthenticationUnsupportedVersion   Result = 0x8068000C
	AuthenticationServerVersionIsOld   Result = 0x8068000D
	AuthenticationUnknown              Result = 0x8068000E
)

var resultNames = map[Result]string{
	CoreUnknown: "Core::Unknown", CoreNotImplemented: "Core::NotImplemented",
	CoreInvalidPointer: "Core::InvalidPointer", CoreOperationAborted: "Core::OperationAborted",
	CoreException: "Core::Exception", CoreAccessDenied: "Core::AccessDenied",
	CoreInvalidHandle: "Core::InvalidHandle", CoreInvalidIndex: "Core::InvalidIndex",
	CoreOutOfMemory: "Core::OutOfMemory", CoreInvalidArgument: "Core::InvalidArgument",
	CoreTimeout: "Core::Timeout", CoreInitializationFailure: "Core::InitializationFailure",
	CoreCallInitiationFailure: "Core::CallInitiationFailure", CoreRegistrationError: "Core::RegistrationError",
	CoreBufferOverflow: "Core::BufferOverflow", CoreInvalidLockState: "Core::InvalidLockState",
	CoreInvalidSequence: "Core::InvalidSequence",

	RendezVousConnectionFailure: "RendezVous::ConnectionFailure", RendezVousNotAuthenticated: "RendezVous::NotAuthenticated",
	RendezVousInvalidUsername: "RendezVous::InvalidUsername", RendezVousInvalidPassword: "RendezVous::InvalidPassword",
	RendezVousUsernameAlreadyExists: "RendezVous::UsernameAlreadyExists", RendezVousAccountDisabled: "RendezVous::AccountDisabled",
	RendezVousAccountExpired: "RendezVous::AccountExpired", RendezVousConcurrentLoginDenied: "RendezVous::ConcurrentLoginDenied",
	RendezVousEncryptionFailure: "RendezVous::EncryptionFailure", RendezVousInvalidPID: "RendezVous::InvalidPID",
	RendezVousMaxConnectionsReached: "RendezVous::MaxConnectionsReached", RendezVousInvalidGID: "RendezVous::InvalidGID",
	RendezVousInvalidConfiguration: "RendezVous::InvalidConfiguration", RendezVousSessionVoid: "RendezVous::SessionVoid",
	RendezVousDDLMismatch: "RendezVous::DDLMismatch", RendezVousClassNotFound: "RendezVous::ClassNotFound",
	RendezVousInvalidOperationLiveEnv: "RendezVous::InvalidOperationInLiveEnvironment",

	AuthenticationNASAuthenticateError: "Authentication::NASAuthenticateError",
	AuthenticationTokenParseError:      "Authentication::TokenParseError",
	AuthenticationTokenExpired:         "Authentication::TokenExpired",
	AuthenticationValidationFailed:     "Authentication::ValidationFailed",
	AuthenticationInvalidParam:         "Authentication::InvalidParam",
	AuthenticationPrincipalIDUnmatched: "Authentication::PrincipalIdUnmatched",
	AuthenticationUnderMaintenance:     "Authentication::UnderMaintenance",
	AuthenticationUnsupportedVersion:   "Authentication::UnsupportedVersion",
	AuthenticationServerVersionIsOld:   "Authentication::ServerVersionIsOld",
	AuthenticationUnknown:              "Authentication::Unknown",
}

// IsError reports whether r has the error bit set.
func (r Result) IsError() bool { return r&ResultErrorMask != 0 }

// IsSuccess reports whether r does not have the error bit set.
func (r Result) IsSuccess() bool { return !r.IsError() }

// Name returns the errors.py name of r ("success" for any success code), or ""
// when the code is not known here.
func (r Result) Name() string {
	if r.IsSuccess() {
		return "success"
	}
	return resultNames[r]
}

// String prints r as its name and code, e.g. "Core::AccessDenied (0x80010006)".
func (r Result) String() string {
	if n := r.Name(); n != "" {
		return fmt.Sprintf("%s (0x%08X)", n, uint32(r))
	}
	return fmt.Sprintf("result 0x%08X", uint32(r))
}

// Error makes an error Result usable as a Go error.
func (r Result) Error() string { return r.String() }
