export function SearchBox({ id, label, value, onChange }: { id: string; label: string; value: string; onChange: (value: string) => void }) {
  return (
    <form className="filters" role="search" onSubmit={(event) => event.preventDefault()}>
      <div className="field">
        <label htmlFor={id}>{label}</label>
        <input id={id} type="search" value={value} onChange={(event) => onChange(event.target.value)} />
      </div>
    </form>
  );
}
