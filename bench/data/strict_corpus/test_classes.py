# mypy: ignore-errors
import unittest


class MyTestCase(unittest.TestCase):
# ^ default-test
    def test_something(self):
        self.assertTrue(compute(), "computed")


class TestInit(unittest.TestCase):
    def __init__(self, *args):
# ^ constructor-init
        super().__init__(*args)
        self.value = 1

    def test_value(self):
        self.assertTrue(self.value, "set")


class TestHelperNotACase:
    def __init__(self, port):
        self.port = port


class TestStore(unittest.TestCase):
# ^ lack-of-cohesion
    def setUp(self):
# ^ general-fixture
        self.store = make_store()
        self.cache = make_cache()

    def tearDown(self):
        self.store.close()

    def test_put(self):
        self.store.put(1)
        self.assertEqual(self.cache.size(), 0, "cache untouched")

    def test_get(self):
        self.assertIsNone(self.store.get(1), "empty")

    def test_version(self):
# ^ test-maverick
        self.assertTrue(version(), "has a version")


class TestMixed:
# ^ lack-of-cohesion
    def test_parse_json(self):
        assert parse_json("{}") == {}, "empty object"

    def test_socket_timeout(self):
        assert socket_timeout() is None, "no timeout"

    def test_render_html(self):
        assert render_html() == "", "empty page"


class TestParser:
    def test_parse_empty(self):
        parser = Parser()
        assert parser.parse("") == [], "empty"

    def test_parse_one(self):
        parser = Parser()
        assert parser.parse("a") == ["a"], "one"


@unittest.skip("replaced by test_v2")
# ^ ignored-test
class TestOld(unittest.TestCase):
    def test_old(self):
        self.assertTrue(old(), "old")
