# mypy: ignore-errors
import pytest


def test_pytest_roulette():
# ^ assertion-roulette
    cart = Cart()
    assert cart.total() == 0
    assert cart.count() == 0


def test_all_messages():
    cart = Cart()
    assert cart.total() == 0, "total"
    assert cart.count() == 0, "count"


def test_literal():
    assert 1 == 1
# ^ redundant-assertion


def test_tuple_assert():
    assert (compute(), "must compute")
# ^ redundant-assertion


def test_is_none():
    assert compute() == None
# ^ suboptimal-assert


def test_magic():
    assert parse_port("x") == 8080
# ^ magic-number


def test_raises_is_an_assertion():
    with pytest.raises(ValueError):
        parse_port("")


def test_repr():
    assert repr(Point(1, 2)) == "Point(x=1, y=2)"


def test_config_shortcut():
    assert str(load()) == str(expected())
# ^ sensitive-equality


def test_only_computes():
# ^ unknown-test
    compute()


def test_helper_asserts():
    check_point(Point(1, 2))


def check_point(point):
    assert point.x < point.y


def test_empty():
# ^ empty-test
    pass


def test_empty_docstring():
# ^ empty-test
    """To do."""
