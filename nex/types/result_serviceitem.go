package types

// Result codes of the ServiceItem protocol (119), named as NintendoClients'
// nintendo/nex/errors.py names them.
const (
	ServiceItemUnknown                  Result = 0x806C0001
	ServiceItemInvalidArgument          Result = 0x806C0002
	ServiceItemEShopUnknownHTTPError    Result = 0x806C0003
	ServiceItemEShopResponseParseError  Result = 0x806C0004
	ServiceItemNotOwned                 Result = 0x806C0005
	ServiceItemInvalidLimitationType    Result = 0x806C0006
	ServiceItemConsumptionRightShortage Result = 0x806C0007
)

func init() {
	for r, n := range map[Result]string{
		ServiceItemUnknown: "ServiceItem::Unknown", ServiceItemInvalidArgument: "ServiceItem::InvalidArgument",
		ServiceItemEShopUnknownHTTPError:    "ServiceItem::EShopUnknownHttpError",
		ServiceItemEShopResponseParseError:  "ServiceItem::EShopResponseParseError",
		ServiceItemNotOwned:                 "ServiceItem::NotOwned",
		ServiceItemInvalidLimitationType:    "ServiceItem::InvalidLimitationType",
		ServiceItemConsumptionRightShortage: "ServiceItem::ConsumptionRightShortage",
	} {
		resultNames[r] = n
	}
}
