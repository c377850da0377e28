# sluice: cpython = true
class Shape:
    def __init__(self, name):
        self.name = name

    def area(self):
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}({self.name!r}, area={self.area():.2f})"


class Rect(Shape):
    def __init__(self, w, h):
        super().__init__("rect")
        self.w, self.h = w, h

    def area(self):
        return self.w * self.h


class Square(Rect):
    def __init__(self, side):
        super().__init__(side, side)
        self.name = "square"

    @property
    def side(self):
        return self.w

    @classmethod
    def unit(cls):
        return cls(1)

    @staticmethod
    def describe():
        return "four equal sides"


shapes = [Rect(2, 3), Square(4), Square.unit()]
for s in shapes:
    print(s)
print(isinstance(shapes[1], Rect), issubclass(Square, Shape), Square.__mro__[1].__name__)
print(shapes[1].side, Square.describe())
print(sorted(shapes, key=lambda s: s.area())[0].name)
