import Hummingbird

/// The context of prefsd's routes: Hummingbird's basic one, and which connection the request
/// came on, so that a watch stream can be ended when that connection closes (``WatchEndings``).
package struct PrefsRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The request's connection.
    let connection: ObjectIdentifier

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        connection = ObjectIdentifier(source.channel)
    }
}
