/// A first-in, first-out list with O(1) amortised removal from the front, for
/// the waiting interactions and the ready operations.
struct Backlog<Element> {
    private var items: [Element] = []
    private var head = 0

    var isEmpty: Bool { head == items.count }
    var count: Int { items.count - head }

    mutating func append(_ element: Element) {
        items.append(element)
    }

    mutating func popFirst() -> Element? {
        guard head < items.count else { return nil }
        let element = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1_024 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        return element
    }

    /// Removes and returns every element, first one first.
    mutating func takeAll() -> [Element] {
        let taken = Array(items[head...])
        items = []
        head = 0
        return taken
    }

    /// Removes the first element for which `matches` is true; returns whether one was.
    mutating func removeFirst(where matches: (Element) -> Bool) -> Element? {
        guard let index = items[head...].firstIndex(where: matches) else { return nil }
        return items.remove(at: index)
    }
}
