package types

// Result codes of the Ranking (112) and DataStore (115) protocols, named as
// NintendoClients' nintendo/nex/errors.py names them.
const (
	RankingNotInitialized   Result = 0x80670001
	RankingInvalidArgument  Result = 0x80670002
	RankingRegistrationErr  Result = 0x80670003
	RankingNotFound         Result = 0x80670005
	RankingInvalidScore     Result = 0x80670006
	RankingInvalidDataSize  Result = 0x80670007
	RankingPermissionDenied Result = 0x80670009
	RankingUnknown          Result = 0x8067000A
	RankingNotImplemented   Result = 0x8067000B

	DataStoreUnknown             Result = 0x80690001
	DataStoreInvalidArgument     Result = 0x80690002
	DataStorePermissionDenied    Result = 0x80690003
	DataStoreNotFound            Result = 0x80690004
	DataStoreAlreadyLocked       Result = 0x80690005
	DataStoreUnderReviewing      Result = 0x80690006
	DataStoreExpired             Result = 0x80690007
	DataStoreInvalidCheckToken   Result = 0x80690008
	DataStoreSystemFileError     Result = 0x80690009
	DataStoreOverCapacity        Result = 0x8069000A
	DataStoreOperationNotAllowed Result = 0x8069000B
	DataStoreInvalidPassword     Result = 0x8069000C
	DataStoreValueNotEqual       Result = 0x8069000D
)

func init() {
	for r, n := range map[Result]string{
		RankingNotInitialized: "Ranking::NotInitialized", RankingInvalidArgument: "Ranking::InvalidArgument",
		RankingRegistrationErr: "Ranking::RegistrationError", RankingNotFound: "Ranking::NotFound",
		RankingInvalidScore: "Ranking::InvalidScore", RankingInvalidDataSize: "Ranking::InvalidDataSize",
		RankingPermissionDenied: "Ranking::PermissionDenied", RankingUnknown: "Ranking::Unknown",
		RankingNotImplemented: "Ranking::NotImplemented",

		DataStoreUnknown: "DataStore::Unknown", DataStoreInvalidArgument: "DataStore::InvalidArgument",
		DataStorePermissionDenied: "DataStore::PermissionDenied", DataStoreNotFound: "DataStore::NotFound",
		DataStoreAlreadyLocked: "DataStore::AlreadyLocked", DataStoreUnderReviewing: "DataStore::UnderReviewing",
		DataStoreExpired: "DataStore::Expired", DataStoreInvalidCheckToken: "DataStore::InvalidCheckToken",
		DataStoreSystemFileError: "DataStore::SystemFileError", DataStoreOverCapacity: "DataStore::OverCapacity",
		DataStoreOperationNotAllowed: "DataStore::OperationNotAllowed", DataStoreInvalidPassword: "DataStore::InvalidPassword",
		DataStoreValueNotEqual: "DataStore::ValueNotEqual",
	} {
		resultNames[r] = n
	}
}
