"""The shop comes through the session (orderbot.shops.shop.Shop): its planner is the offline
provider, its words read the facts and the claims, and a run record names it so that a stored
run is read in the same words. (tests/test_imports.py keeps the particular shops out of every
module outside orderbot/shops/ and orderbot/commands/.)"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from clikit import cli
from runkit import open_store
from saying import raises

from orderbot.errors import ConfigError
from orderbot.models import create
from orderbot.settings import load_settings
from orderbot.shops.retail.offline import RetailOfflineModel
from orderbot.shops.retail.shop import SHOP as RETAIL
from orderbot.shops.sample.offline import OfflineModel
from orderbot.shops.sample.shop import SHOP as SAMPLE
from orderbot.shops.session import DEFAULT_SHOP, shop_named

DB = Path(__file__).parents[1] / "fixtures" / "tau2-retail" / "db.json"


def test_the_offline_provider_is_the_shops_own_planner():
    settings = load_settings(provider="offline")
    assert isinstance(create(settings, SAMPLE), OfflineModel)
    assert isinstance(create(settings, RETAIL), RetailOfflineModel)


@pytest.mark.parametrize("shop", ["sample", "retail"])
def test_a_record_names_its_shop_and_the_name_gives_the_shop_back(tmp_path, shop):
    orders = tmp_path / "orders.json"
    shutil.copyfile(DB if shop == "retail" else SAMPLE.sample, orders)
    done = cli("ask", "--orders", str(orders), "--provider", "offline", "--json", "where is my order #W5866402?")
    assert done.exit_code == 0, done.output
    record = open_store(Path(os.environ["ORDERBOT_STATE_DIR"])).load(json.loads(done.stdout)["run_id"])
    assert record.shop == shop and shop_named(record.shop) is (RETAIL if shop == "retail" else SAMPLE)


def test_a_record_older_than_the_field_is_the_default_shops_and_an_unknown_one_is_refused():
    assert shop_named(None) is DEFAULT_SHOP is SAMPLE
    with raises(ConfigError, match="'nowhere'"):
        shop_named("nowhere")


def test_each_shop_reads_an_answer_in_its_own_words():
    """The same answer about an order that was delivered: the sample shop's 已签收 is the retail
    shop's "delivered", and "not delivered" contradicts either."""
    from orderbot.answers.claims import check
    from orderbot.answers.facts import Fact

    for shop, delivered in ((SAMPLE, "已签收"), (RETAIL, "delivered")):
        facts = [Fact("ORD-1", status=delivered)]
        assert check("It has been delivered.", facts, vocabulary=shop.vocabulary) == []
        [claim] = check("It has not been delivered yet.", facts, vocabulary=shop.vocabulary)
        assert (claim.kind, claim.observed) == ("status", delivered)
