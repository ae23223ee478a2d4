package types

// Result codes of the friends server (Friends 101 and 102) (module FPD, 0x65), named and numbered as
// NintendoClients' nintendo/nex/errors.py has them.
const (
	FPDInvalidArgument         Result = 0x80650007
	FPDInvalidPrincipalID      Result = 0x80650009
	FPDInvalidLocalFriendCode  Result = 0x8065000A
	FPDFriendAlreadyExists     Result = 0x8065000E
	FPDFriendNotExists         Result = 0x8065000F
	FPDFriendNumMax            Result = 0x80650010
	FPDNotFriend               Result = 0x80650011
	FPDUnknown                 Result = 0x80650014
	FPDInvalidState            Result = 0x80650015
	FPDAddFriendProhibited     Result = 0x80650017
	FPDInvalidAccount          Result = 0x80650019
	FPDBlacklistedByMe         Result = 0x8065001A
	FPDFriendAlreadyAdded      Result = 0x8065001C
	FPDMyFriendListLimitExceed Result = 0x8065001D
	FPDRequestLimitExceed      Result = 0x8065001E
	FPDInvalidMessageID        Result = 0x8065001F
	FPDMessageIsNotMine        Result = 0x80650020
	FPDMessageIsNotForMe       Result = 0x80650021
	FPDFriendRequestBlocked    Result = 0x80650022
	FPDNotInMyFriendList       Result = 0x80650023
	FPDNotInMyBlacklist        Result = 0x80650025
	FPDSizeLimitExceeded       Result = 0x80650028
	FPDOperationNotAllowed     Result = 0x80650029
	FPDNotificationNotFound    Result = 0x8065002B
	FPDFriendRequestNotAllowed Result = 0x8065002D
)

// RendezVousNotFriend refuses a player who is not a friend of a friend-only
// matchmake session's owner (NintendoClients' errors.py: RendezVous::NotFriend).
const RendezVousNotFriend Result = 0x800300DA

func init() {
	resultNames[RendezVousNotFriend] = "RendezVous::NotFriend"
	for r, n := range map[Result]string{
		FPDInvalidArgument: "FPD::InvalidArgument", FPDInvalidPrincipalID: "FPD::InvalidPrincipalID",
		FPDInvalidLocalFriendCode: "FPD::InvalidLocalFriendCode", FPDFriendAlreadyExists: "FPD::FriendAlreadyExists",
		FPDFriendNotExists: "FPD::FriendNotExists", FPDFriendNumMax: "FPD::FriendNumMax",
		FPDNotFriend: "FPD::NotFriend", FPDUnknown: "FPD::Unknown", FPDInvalidState: "FPD::InvalidState",
		FPDAddFriendProhibited: "FPD::AddFriendProhibited", FPDInvalidAccount: "FPD::InvalidAccount",
		FPDBlacklistedByMe: "FPD::BlacklistedByMe", FPDFriendAlreadyAdded: "FPD::FriendAlreadyAdded",
		FPDMyFriendListLimitExceed: "FPD::MyFriendListLimitExceed", FPDRequestLimitExceed: "FPD::RequestLimitExceed",
		FPDInvalidMessageID: "FPD::InvalidMessageID", FPDMessageIsNotMine: "FPD::MessageIsNotMine",
		FPDMessageIsNotForMe: "FPD::MessageIsNotForMe", FPDFriendRequestBlocked: "FPD::FriendRequestBlocked",
		FPDNotInMyFriendList: "FPD::NotInMyFriendList", FPDNotInMyBlacklist: "FPD::NotInMyBlacklist",
		FPDSizeLimitExceeded: "FPD::SizeLimitExceeded", FPDOperationNotAllowed: "FPD::OperationNotAllowed",
		FPDNotificationNotFound: "FPD::NotificationNotFound", FPDFriendRequestNotAllowed: "FPD::FriendRequestNotAllowed",
	} {
		resultNames[r] = n
	}
}
