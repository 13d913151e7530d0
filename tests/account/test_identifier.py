"""The account URL derived from an account identifier, as Snowflake documents it
("Account identifiers"; "Connecting to your accounts"; the JDBC driver's
allowUnderscoresInHost): one table, every form a user may write."""

from __future__ import annotations

import pytest

from elastic_channels.account import parse_account
from elastic_channels.setting import SettingError

DERIVATIONS = [
    # (what a user writes, the account's name (JWTs, the SDK's account), the URL's host)
    # The preferred form: organization name, hyphen, account name.
    ("myorg-myacct", "myorg-myacct", "myorg-myacct.snowflakecomputing.com"),
    ("MYORG-MYACCT", "MYORG-MYACCT", "myorg-myacct.snowflakecomputing.com"),
    # An account name with underscores: a hyphen for each in the host name.
    ("myorg-my_acct", "myorg-my_acct", "myorg-my-acct.snowflakecomputing.com"),
    ("myorg-my_test_acct", "myorg-my_test_acct", "myorg-my-test-acct.snowflakecomputing.com"),
    # orgname.account_name, as SQL commands write it: the same account.
    ("myorg.myacct", "myorg-myacct", "myorg-myacct.snowflakecomputing.com"),
    ("myorg.my_acct", "myorg-my_acct", "myorg-my-acct.snowflakecomputing.com"),
    # Legacy account locators: in AWS US West (Oregon) alone, else with region and cloud.
    ("xy12345", "xy12345", "xy12345.snowflakecomputing.com"),
    ("xy12345.us-east-2.aws", "xy12345", "xy12345.us-east-2.aws.snowflakecomputing.com"),
    ("XY12345.us-east-1", "XY12345", "xy12345.us-east-1.snowflakecomputing.com"),
    ("xy12345.east-us-2.azure", "xy12345", "xy12345.east-us-2.azure.snowflakecomputing.com"),
    ("xy12345.us-central1.gcp", "xy12345", "xy12345.us-central1.gcp.snowflakecomputing.com"),
    # Private connectivity: .privatelink, whose DNS names keep the underscores.
    ("myorg-myacct.privatelink", "myorg-myacct",
     "myorg-myacct.privatelink.snowflakecomputing.com"),
    ("myorg-my_acct.privatelink", "myorg-my_acct",
     "myorg-my_acct.privatelink.snowflakecomputing.com"),
    ("xy12345.us-east-2.privatelink", "xy12345",
     "xy12345.us-east-2.privatelink.snowflakecomputing.com"),
    # The account URL or host as a browser shows it.
    ("https://myorg-myacct.snowflakecomputing.com", "myorg-myacct",
     "myorg-myacct.snowflakecomputing.com"),
    ("myorg-myacct.snowflakecomputing.com/", "myorg-myacct",
     "myorg-myacct.snowflakecomputing.com"),
    ("  myorg-myacct  ", "myorg-myacct", "myorg-myacct.snowflakecomputing.com"),
]  # fmt: skip


@pytest.mark.parametrize(("given", "name", "host"), DERIVATIONS)
def test_the_account_url_is_derived_as_documented(given: str, name: str, host: str) -> None:
    ident = parse_account(given)
    assert (ident.name, ident.host) == (name, host)
    assert ident.url == f"https://{host}"


@pytest.mark.parametrize(
    "given", ["", "my acct", "myorg/myacct", "myorg-myacct..aws", "myorg-myacct:443", "acct."]
)
def test_what_is_no_identifier_is_named(given: str) -> None:
    with pytest.raises(SettingError, match=r"--account .* is not an account identifier"):
        parse_account(given, "--account")
