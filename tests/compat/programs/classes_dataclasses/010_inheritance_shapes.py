import math

class Shape:
    def __init__(self, name: str):
        self.name = name

    def area(self) -> float:
        raise NotImplementedError

    def describe(self) -> str:
        return f"{self.name} with area {self.area():.2f}"

class Rectangle(Shape):
    def __init__(self, w: float, h: float):
        super().__init__("rectangle")
        self.w, self.h = w, h

    def area(self):
        return self.w * self.h

class Square(Rectangle):
    def __init__(self, side: float):
        super().__init__(side, side)
        self.name = "square"

class Circle(Shape):
    def __init__(self, r: float):
        super().__init__("circle")
        self.r = r

    def area(self):
        return math.pi * self.r ** 2

shapes = [Rectangle(3, 4.5), Square(2), Circle(1.5)]
for s in sorted(shapes, key=lambda s: s.area()):
    print(s.describe())
print([type(s).__name__ for s in shapes], isinstance(shapes[1], Rectangle))
print([c.__name__ for c in Square.__mro__])
