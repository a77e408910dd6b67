# mypy: ignore-errors
import unittest


class TestCart(unittest.TestCase):
# ^ lack-of-cohesion
    def test_totals(self):
# ^ assertion-roulette
        cart = Cart()
        self.assertEqual(cart.total(), 0)
        self.assertEqual(cart.count(), 0, "empty cart has no items")

    def test_labelled(self):
        cart = Cart()
        self.assertEqual(cart.total(), 0, "total")
        self.assertEqual(cart.count(), 0, msg="count")

    def test_duplicate(self):
        total = Cart().total()
        self.assertEqual(total, 0, "zero")
        self.assertEqual(total, 0, "zero")
# ^ duplicate-assert

    def test_side_effect_repeat(self):
        stream = open_stream()
        self.assertEqual(stream.read_line(), b"a", "first line")
        self.assertEqual(stream.read_line(), b"a", "second line")

    def test_redundant(self):
        self.assertTrue(True)
# ^ redundant-assertion

    def test_self_compare(self):
        point = Point(1, 2)
        self.assertEqual(point, point)
# ^ redundant-assertion

    def test_suboptimal(self):
        result = compute()
        self.assertTrue(result == 3, "result")
# ^ suboptimal-assert
        self.assertEqual(result, None, "none")
# ^ suboptimal-assert

    def test_operator_under_test(self):
        self.assertFalse(Point(1, 2) == Point(2, 1), "== on different points")

    def test_deprecated(self):
        self.assertEquals(compute(), 3)
# ^ suboptimal-assert

    def test_magic(self):
        self.assertEqual(len(load_rows()), 17)
# ^ magic-number

    def test_small_numbers(self):
        self.assertEqual(len(load_rows()), 3)

    def test_status(self):
        response = get("/old")
        self.assertEqual(response.status, 302)
# ^ magic-number

    def test_sensitive(self):
        self.assertEqual(str(load_config()), "{'debug': True}")
# ^ sensitive-equality

    def test_nothing_checked(self):
# ^ unknown-test
        load_config()

    def test_logs(self):
        with self.assertLogs("app", level="INFO"):
            run_job()
